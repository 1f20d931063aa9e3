/* The public surface of the console library: the one header its users include. */
#ifndef CV_CONSOLE_H
#define CV_CONSOLE_H

#include "../web_api.h"
#include "../web_reads.h"
#include "../web_route.h"
#include "../web_server.h"
#include "../web_view.h"

#endif /* CV_CONSOLE_H */
