/* The public surface of the node library: the one header its users include. */
#ifndef CV_NODE_H
#define CV_NODE_H

#include "../agent_cgroup.h"
#include "../agent_conf.h"
#include "../agent_desc.h"
#include "../agent_env.h"
#include "../agent_guard.h"
#include "../agent_loadfile.h"
#include "../agent_logcap.h"
#include "../agent_node.h"
#include "../agent_policy.h"
#include "../agent_ports.h"
#include "../agent_probe.h"
#include "../agent_proc.h"
#include "../agent_replica.h"
#include "../agent_report.h"
#include "../agent_restart.h"
#include "../agent_sandbox.h"
#include "../agent_spec.h"
#include "../agent_state.h"
#include "../agent_subst.h"

#endif /* CV_NODE_H */
