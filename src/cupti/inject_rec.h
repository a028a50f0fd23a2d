/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inject_rec.h - record -p PID --cupti / -a --cupti: load the CUPTI library
 * into the running targets at the start (src/cupti/inject.c), switch it
 * off at the end, and say what happened on stderr and in the trace's notes
 * (cupti.inject, cupti.detach; `gpubpf info` shows them).
 */
#ifndef GB_INJECT_REC_H
#define GB_INJECT_REC_H
#include <stdbool.h>
#include <sys/types.h>

struct inject_rec;
struct cupti_attach;

/* the leases are renewed at least this often, waits included */
#define INJECT_REC_RENEW_NS	1000000000ull

/*
 * lib for the processes given to inject_rec_attach; usdt: the probes on
 * lib, also put on the copies placed in containers whose mount namespace
 * does not show lib. NULL only when out of memory.
 */
struct inject_rec *inject_rec_new(const char *lib, struct cupti_attach *usdt);
/* pids (or, all: every process that maps libcuda/libcudart) get lib, one
 * after the other; never fails the recording */
void inject_rec_attach(struct inject_rec *ir, const pid_t *pids, unsigned npids, bool all);
/* renew gpubpf's lease on each injected library (every second while recording) */
void inject_rec_renew(struct inject_rec *ir);
/*
 * The same from inside a wait on one target (its injection or its detach,
 * each up to seconds): the others' leases renewed when a second has gone
 * by since the last renewal, those whose control block is known only.
 * Without it an attach to eight processes, or a detach whose CUPTI takes
 * long to flush, let the others' leases run out: their device timing
 * switched itself off mid-recording.
 */
void inject_rec_keep(struct inject_rec *ir);
/* ask each injected library to flush and switch off (before the last drain) */
void inject_rec_stop(struct inject_rec *ir);
/* the note for key (cupti.inject, cupti.detach, cupti.test_cycles), NULL if none */
const char *inject_rec_note(const struct inject_rec *ir, const char *key);
void inject_rec_free(struct inject_rec *ir);	/* NULL is fine */
#endif
