/* The public surface of the contract library: the one header its users include. */
#ifndef CV_CONTRACT_H
#define CV_CONTRACT_H

#include "../cv_keys.h"
#include "../cv_limits.h"
#include "../cv_msg.h"
#include "../cv_offsets.h"
#include "../cv_script.h"
#include "../cv_seal.h"
#include "../cv_slot.h"

#endif /* CV_CONTRACT_H */
