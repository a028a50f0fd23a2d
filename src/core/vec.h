/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * vec.h - the one growable-array helper (gb_grow() lives in util.c).
 *
 * GB_GROW(arr, cap, need) makes room for at least need elements of *arr:
 * the capacity doubles (from GB_GROW_MIN) until it holds need, so appends
 * are amortised O(1). On failure (no memory, or a size that overflows
 * size_t or cap's own unsigned type) it returns -ENOMEM or -EOVERFLOW and
 * leaves arr and cap as they were; on success it returns 0. New elements
 * are not initialised. GB_GROW_OR_DIE aborts with "out of memory" instead,
 * for callers that cannot go on without it.
 *
 *	if (GB_GROW(v, cap, n + 1))
 *		return -ENOMEM;
 *	v[n++] = x;
 */
#ifndef GB_VEC_H
#define GB_VEC_H

#include <stddef.h>

#define GB_GROW_MIN 16

/*
 * *pp holds *capp elements of elsz bytes; make it hold need, with a
 * capacity of at most maxcap. 0 or -errno; *pp and *capp unchanged on error.
 */
int gb_grow(void **pp, size_t *capp, size_t need, size_t elsz, size_t maxcap);
void gb_oom(void) __attribute__((noreturn));	/* "gpubpf: out of memory", abort */

#define GB_GROW(arr, cap, need) __extension__ ({				\
	_Static_assert((__typeof__(cap))-1 > 0, "GB_GROW: cap must be unsigned"); \
	void *gb_p_ = (arr);							\
	size_t gb_c_ = (cap), gb_n_ = (need);					\
	int gb_r_ = 0;								\
	if (gb_n_ > gb_c_) {							\
		gb_r_ = gb_grow(&gb_p_, &gb_c_, gb_n_, sizeof(*(arr)),		\
				(size_t)(__typeof__(cap))-1);			\
		if (!gb_r_) {							\
			(arr) = gb_p_;						\
			(cap) = (__typeof__(cap))gb_c_;				\
		}								\
	}									\
	gb_r_;									\
})

#define GB_GROW_OR_DIE(arr, cap, need) do {					\
	if (GB_GROW(arr, cap, need))						\
		gb_oom();							\
} while (0)

#endif
