/* The public surface of the status library: the one header its users include. */
#ifndef CV_STATUS_H
#define CV_STATUS_H

#include "../cli_common.h"
#include "../cli_crmview.h"
#include "../cli_duration.h"
#include "../cli_events.h"
#include "../cli_explain.h"
#include "../cli_files.h"
#include "../cli_graph.h"
#include "../cli_hooks.h"
#include "../cli_list.h"
#include "../cli_live.h"
#include "../cli_nodemap.h"
#include "../cli_noderow.h"
#include "../cli_output.h"
#include "../cli_replview.h"
#include "../cli_secret.h"
#include "../cli_secret_io.h"
#include "../cli_service.h"
#include "../cli_show.h"
#include "../cli_stack.h"
#include "../cli_template.h"
#include "../cli_topics.h"
#include "../cli_traversal.h"
#include "../cli_waiting.h"
#include "../cli_waiting_io.h"

#endif /* CV_STATUS_H */
