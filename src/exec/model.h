/*
 * model.h: the user's model in an exec record, from the hook's layer
 * window (cnntop/hookfeed.h's HookModel): its rows, FLOPs per image and
 * the machine's peak to set it against.
 */
#ifndef CNNTOP_EXEC_MODEL_H
#define CNNTOP_EXEC_MODEL_H

#include "cnntop/hookfeed.h"
#include "cnntop/record.h"

/*
 * When the window is complete: r->have_model and r->model, one layer row
 * per module and direction ("conv1 fwd", "conv1 bwd"; the optimizer's
 * step one row), r->flops_per_image (the rows' training FLOPs per image)
 * and, from the calibration cache for r->threads_used compute threads
 * (calibrate_load(); none is measured), the peak and the rates of the time
 * on paper.  Else nothing changes.  Returns 0 or -CN_ENOMEM.
 */
int exec_model_fill(RunRecord *r, const HookModel *m);

#endif
