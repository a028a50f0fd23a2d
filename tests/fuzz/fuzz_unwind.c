// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_unwind.c - libFuzzer target: arbitrary bytes as a --stack dwarf
 * record (the frame pointer and the copied stack words are the traced
 * process's memory: anything), its ip somewhere in this very binary, so
 * libunwind finds real unwind tables and follows whatever the words say.
 * The oracle is the memo's promise of exactness: a table that remembers
 * unwinds (of this input and all earlier ones, many with the same ip and
 * sp) answers exactly what a fresh table's unwind gives.
 */
// FUZZ_SRCS: src/stacks/stack.c src/stacks/stack_mod.c src/stacks/srcline.c src/stacks/unwind.c src/stacks/unwind_memo.c src/stacks/pyframes.c src/host/procmaps.c src/host/elfsym.c src/core/hmap.c src/core/util.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stacks/stack_int.h"

#define SP	0x7ffe00001000ull	/* where the copy claims to come from */
#define MAXF	64

static struct gb_maps maps;
static struct stack_table *memo_t;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_ops ops = { 0 };
	uint64_t a[MAXF], b[MAXF], c[MAXF];
	struct stack_table *fresh;
	struct gb_stack_rec *s;
	size_t len;
	unsigned na, nb, nc;

	if (size < 9)
		return 0;
	if (!memo_t) {
		if (procmaps_read(getpid(), &maps) || !(memo_t = stack_table_new(&ops)))
			abort();
	}
	len = size - 9 > 4096 ? 4096 : size - 9;
	s = calloc(1, GB_STACK_REC_HDR + len);	/* exact size: ASan sees any overread */
	if (!s)
		return 0;
	s->r.kind = GB_REC_STACK;
	s->r.pid = s->r.tid = (uint32_t)getpid();
	s->regs[16] = (uint64_t)(uintptr_t)LLVMFuzzerTestOneInput + data[0];	/* rip */
	s->regs[19] = SP;							/* rsp */
	memcpy(&s->regs[4], data + 1, 8);					/* rbp */
	s->sp = SP;
	s->len = (uint32_t)len;
	memcpy(s->data, data + 9, len);
	fresh = stack_table_new(&ops);
	if (!fresh)
		abort();
	na = unwind_rec(fresh, &maps, s, GB_STACK_REC_HDR + len, a, MAXF);
	nb = unwind_rec(memo_t, &maps, s, GB_STACK_REC_HDR + len, b, MAXF);
	nc = unwind_rec(memo_t, &maps, s, GB_STACK_REC_HDR + len, c, MAXF);
	if (na != nb || na != nc || memcmp(a, b, na * 8) || memcmp(a, c, na * 8))
		abort();
	stack_table_free(fresh);
	free(s);
	return 0;
}
