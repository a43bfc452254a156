/*
 * The target's view of login parameters: the key table and struct
 * iscsi_params (tcq/login_keys.h) and the key=value text (tcq/kv.h) are
 * shared with the initiator and live below both. This header stays so
 * that the target's files keep one name for them.
 */
#ifndef TCQ_PARAM_H
#define TCQ_PARAM_H
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#endif
