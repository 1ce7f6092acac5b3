/* The C door into the CUDA code: every function here returns 0 on success;
   on failure a nonzero code and, where it takes one, a message. */
#ifndef FUSEDCUDA_H
#define FUSEDCUDA_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
int FusedCUDADeviceCount(int *count, char *reason, size_t reasonlen);
int FusedCUDADeviceName(int device, char *name, size_t namelen, char *errmsg, size_t errlen);
#ifdef __cplusplus
}
#endif
#endif
