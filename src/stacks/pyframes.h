/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* pyframes.h - CPython frames in call stacks (--python), see pyframes.c */
#ifndef GB_PYFRAMES_H
#define GB_PYFRAMES_H
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

struct intern;

/* Offsets of the interpreter binary python (3.11+); 0, or -1 with a one-line message */
int pyframes_offsets(const char *python, struct gb_py_offsets *o, char *err, size_t errlen);
/* Line of code unit instr from a 3.11+ co_linetable; firstline when unknown */
int pyframes_line(const uint8_t *lt, unsigned len, int firstline, int instr);
/* A GB_REC_PYSTACK record -> frames (sym = function, module = file, line), innermost first */
unsigned pyframes_decode(const void *rec, size_t size, struct gb_frame *out, unsigned max,
			 struct intern *strs);
#endif
