/* ibdyn joints, motors, springs and velocity-only constraints (issue: joints). */
#ifndef IBDYN_JOINT_H
#define IBDYN_JOINT_H

#include "base.h"
#include "id.h"
#include "math.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
