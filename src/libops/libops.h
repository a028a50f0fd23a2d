/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libops.h - per process, the state library operations are described by:
 * cuBLAS handle -> stream (cublasSetStream), cuBLASLt matrix layouts and
 * matmul descriptors, cuDNN tensor, filter and convolution descriptors,
 * each read at the call that set it and kept by handle (the way kernel
 * names are kept from cuModuleGetFunction). The collector feeds every
 * GB_CAT_DESC call in and stamps every GB_CAT_OP call with the shape they
 * give (fields: the comment at the top of core/event.c).
 */
#ifndef GB_LIBOPS_H
#define GB_LIBOPS_H

#include "core/event.h"
#include "core/hmap.h"

/* a descriptor call (GB_CAT_DESC) of the process whose state is descs; r: its raw record */
void libops_desc(struct hmap *descs, const struct gb_event *ev, const struct gb_rec *r);
/* a library op (GB_CAT_OP): its shape from the descriptors it names */
void libops_stamp(struct hmap *descs, struct gb_event *ev, const struct gb_rec *r);
void libops_free(struct hmap *descs);
/* nvrtcCompileProgram's options as BPF read them (one per GB_JIT_OPT_LEN bytes of a
 * GB_NAME_MAX name), joined by spaces into out (GB_NAME_MAX + 1 bytes); NULL if none */
const char *libops_jit_opts(const char *raw, char *out);
#endif
