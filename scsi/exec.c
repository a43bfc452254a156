/* How an executor's answer completes a task (see exec.h). */
#include "tcq/bufpool.h"
#include "scsi/exec.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/task.h"
#include "scsi/taskset.h"

void exec_finish(struct tcq_task *t)
{
	sbc_unlock(t);		/* nothing when it holds no range */
	if (t->exec.buf) {
		bufpool_free(t->exec.buf, t->exec.buf_len);
		t->exec.buf = NULL;
		t->exec.buf_len = 0;
	}
	taskset_complete(t);
}

struct exec_rc exec_good(struct tcq_task *t)
{
	t->status = SAM_STAT_GOOD;
	exec_finish(t);
	return EXEC_OK;
}

void exec_set(struct tcq_task *t, struct exec_rc rc)
{
	if (rc.status == SAM_STAT_CHECK_CONDITION) {
		sense_set_si(t, &rc.si);
		return;
	}
	t->status = rc.status;
	t->sense_len = 0;
}

void exec_fail(struct tcq_task *t, struct exec_rc rc)
{
	exec_set(t, rc);
	exec_finish(t);
}
