// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* steps_out.c - the steps summed up, the slow ones explained, and printed (see steps.h) */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/util.h"
#include "steps.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool counted(const struct step *s)
{
	return !s->warmup && !s->partial;
}

/* counted, and its time known */
static bool timed(const struct step *s)
{
	return counted(s) && !s->open;
}

/* the median of one fact over the counted steps (v: scratch of n) */
static uint64_t median_of(const struct step *st, unsigned n, uint64_t *v, size_t off, size_t size)
{
	unsigned i, k = 0;

	for (i = 0; i < n; i++) {
		const char *f = (const char *)&st[i] + off;

		if (!timed(&st[i]))
			continue;
		if (size == sizeof(uint32_t)) {
			uint32_t x;

			memcpy(&x, f, sizeof(x));
			v[k++] = x;
		} else {
			memcpy(&v[k++], f, sizeof(uint64_t));
		}
	}
	if (!k)
		return 0;
	qsort(v, k, sizeof(*v), cmp_u64);
	return v[k / 2];
}

#define MED(field) \
	median_of(st, n, v, offsetof(struct step, field), sizeof(((struct step *)0)->field))

void steps_summary(const struct step *st, unsigned n, struct steps_sum *out)
{
	uint64_t *v = calloc(n ? n : 1, sizeof(*v)), sum = 0;
	unsigned i, k = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return;
	for (i = 0; i < n; i++) {
		out->warmup += st[i].warmup;
		out->partial += st[i].partial;
		out->counted += counted(&st[i]);
		if (timed(&st[i])) {
			v[k++] = st[i].end - st[i].start;
			sum += st[i].end - st[i].start;
		}
	}
	if (k) {
		qsort(v, k, sizeof(*v), cmp_u64);
		out->mean_ns = sum / k;
		out->median_ns = v[gb_pct_index(k, 50)];
		out->p99_ns = v[gb_pct_index(k, 99)];
		out->max_ns = v[k - 1];
		out->med.kernels = (uint32_t)MED(kernels);
		out->med.allocs = (uint32_t)MED(allocs);
		out->med.colls = (uint32_t)MED(colls);
		out->med.jits = (uint32_t)MED(jits);
		out->med.syncs = (uint32_t)MED(syncs);
		out->med.dev_ns = MED(dev_ns);
		out->med.sync_ns = MED(sync_ns);
		out->med.coll_ns = MED(coll_ns);
		out->med.jit_ns = MED(jit_ns);
		out->med.alloc_ns = MED(alloc_ns);
		out->med.copy_bytes = MED(copy_bytes);
		out->med.max_gap = MED(max_gap);
	}
	free(v);
}

bool steps_slow(const struct step *st, const struct steps_sum *sum)
{
	uint64_t d = st->end - st->start;

	return timed(st) && sum->counted >= 3 && d >= sum->median_ns + STEPS_SLOW_MIN_NS &&
	       (double)d >= STEPS_SLOW * (double)sum->median_ns;
}

static void add(struct step_cause *c, unsigned *n, unsigned max, const char *what, uint64_t ns,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add(struct step_cause *c, unsigned *n, unsigned max, const char *what, uint64_t ns,
		const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	c[*n].what = what;
	c[*n].ns = ns;
	va_start(ap, fmt);
	vsnprintf(c[*n].text, sizeof(c[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
}

static int cmp_cause(const void *a, const void *b)
{
	const struct step_cause *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

/*
 * What the step did that the median step did not: a kind of call it made
 * more often (JIT, allocations, synchronisations), or time it spent in one
 * kind of work that covers at least 30% of its extra time.
 */
unsigned steps_causes(const struct step *st, const struct steps_sum *sum, struct step_cause *c,
		      unsigned max)
{
	const struct step *m = &sum->med;
	uint64_t d = st->end - st->start, extra = d > sum->median_ns ? d - sum->median_ns : 0;
	uint64_t big = extra * 3 / 10;
	unsigned n = 0;
	char t1[32], t2[32];

	if (st->jits > m->jits)
		add(c, &n, max, "jit", st->jit_ns > m->jit_ns ? st->jit_ns - m->jit_ns : 0,
		    "JIT compilation: %u call%s, %s (median step: %u)", st->jits, st->jits == 1 ? "" : "s",
		    gb_fmt_ns(t1, sizeof(t1), st->jit_ns, " "), m->jits);
	if (st->allocs > m->allocs)
		add(c, &n, max, "alloc", st->alloc_ns > m->alloc_ns ? st->alloc_ns - m->alloc_ns : 0,
		    "%u device allocation%s, %s (median step: %u)", st->allocs, st->allocs == 1 ? "" : "s",
		    gb_fmt_ns(t1, sizeof(t1), st->alloc_ns, " "), m->allocs);
	if (st->syncs > m->syncs || st->sync_ns > m->sync_ns + big)
		add(c, &n, max, "sync", st->sync_ns > m->sync_ns ? st->sync_ns - m->sync_ns : 0,
		    "%s waiting in %u synchronisation%s (median step: %s in %u)%s",
		    gb_fmt_ns(t1, sizeof(t1), st->sync_ns, " "), st->syncs, st->syncs == 1 ? "" : "s",
		    gb_fmt_ns(t2, sizeof(t2), m->sync_ns, " "), m->syncs,
		    st->syncs > m->syncs ? ": a synchronisation the median step does not make" : "");
	if (st->coll_ns > m->coll_ns + big && st->colls)
		add(c, &n, max, "collective", st->coll_ns - m->coll_ns,
		    "%s in %u collective%s (median step: %s): waiting for a late rank?",
		    gb_fmt_ns(t1, sizeof(t1), st->coll_ns, " "), st->colls, st->colls == 1 ? "" : "s",
		    gb_fmt_ns(t2, sizeof(t2), m->coll_ns, " "));
	if (st->max_gap > m->max_gap + big)
		add(c, &n, max, "host_gap", st->max_gap - m->max_gap,
		    "a host gap of %s with no GPU call (median step's longest: %s)",
		    gb_fmt_ns(t1, sizeof(t1), st->max_gap, " "), gb_fmt_ns(t2, sizeof(t2), m->max_gap, " "));
	if (st->dev_ns > m->dev_ns + big)
		add(c, &n, max, "device", st->dev_ns - m->dev_ns, "%s of device time (median step: %s)",
		    gb_fmt_ns(t1, sizeof(t1), st->dev_ns, " "), gb_fmt_ns(t2, sizeof(t2), m->dev_ns, " "));
	if (st->kernels > m->kernels + 2 && st->kernels * 10 > m->kernels * 11)
		add(c, &n, max, "kernels", 0, "%u kernel launches (median step: %u)", st->kernels, m->kernels);
	qsort(c, n, sizeof(*c), cmp_cause);
	return n;
}

static int by_dur(const void *a, const void *b, void *ctx)
{
	const struct step *st = ctx, *x = &st[*(const unsigned *)a], *y = &st[*(const unsigned *)b];
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	return dx > dy ? -1 : dx < dy;
}

static const char *source_text(enum steps_source src)
{
	return src == STEPS_NVTX ? "NVTX ranges named like steps" :
	       src == STEPS_DETECTED ? "detected: the unit of GPU work that repeats" : "none";
}

static void text_proc(struct gb_buf *b, const struct steps *s, unsigned i, bool all)
{
	const struct step *st;
	struct step_cause c[STEPS_MAX_CAUSES];
	struct steps_sum sum;
	const char *why;
	enum steps_source src = steps_source(s, i, &why);
	unsigned n, k, j, nc, slow = 0, *order;
	char t[4][32];

	st = steps_of(s, i, &n);
	gb_buf_printf(b, "  pid %u (%s): ", steps_pid(s, i), *steps_comm(s, i) ? steps_comm(s, i) : "?");
	if (src == STEPS_NONE || !n) {
		gb_buf_printf(b, "no steps (%s)\n", why ? why : "no repeating unit of GPU work");
		return;
	}
	steps_summary(st, n, &sum);
	gb_buf_printf(b, "%u step%s (%s", sum.counted, sum.counted == 1 ? "" : "s", source_text(src));
	if (sum.warmup)
		gb_buf_printf(b, "; %u warm-up step%s not counted", sum.warmup, sum.warmup == 1 ? "" : "s");
	if (sum.partial)
		gb_buf_printf(b, "; the last, cut by the trace's end, not counted");
	else if (st[n - 1].open)
		gb_buf_printf(b, "; the last one's time is not known: no step follows it");
	gb_buf_printf(b, ")\n");
	if (sum.counted)
		gb_buf_printf(b, "    step time: mean %s, median %s, p99 %s, max %s\n",
			      gb_fmt_ns(t[0], sizeof(t[0]), sum.mean_ns, " "), gb_fmt_ns(t[1], sizeof(t[1]), sum.median_ns, " "),
			      gb_fmt_ns(t[2], sizeof(t[2]), sum.p99_ns, " "), gb_fmt_ns(t[3], sizeof(t[3]), sum.max_ns, " "));
	if (all) {
		gb_buf_printf(b, "    %5s %12s %10s %8s %7s %9s %6s %9s %5s %9s %10s\n", "STEP", "START s",
			      "TIME ms", "KERNELS", "SYNCS", "SYNC ms", "ALLOCS", "COLL ms", "JITS", "GAP ms",
			      "COPY bytes");
		for (k = 0; k < n; k++)
			gb_buf_printf(b, "    %5u %12.6f %10.3f %8u %7u %9.3f %6u %9.3f %5u %9.3f %10" PRIu64 "%s\n",
				      k + 1, (st[k].start - st[0].start) / 1e9, (st[k].end - st[k].start) / 1e6,
				      st[k].kernels, st[k].syncs, st[k].sync_ns / 1e6, st[k].allocs,
				      st[k].coll_ns / 1e6, st[k].jits, st[k].max_gap / 1e6, st[k].copy_bytes,
				      st[k].warmup ? " warm-up" : st[k].partial ? " cut" : st[k].open ? " end unknown" :
				      steps_slow(&st[k], &sum) ? " SLOW" : "");
	}
	order = calloc(n, sizeof(*order));
	for (k = 0; order && k < n; k++)
		if (steps_slow(&st[k], &sum))
			order[slow++] = k;
	if (order && !all)	/* the slowest first */
		qsort_r(order, slow, sizeof(*order), by_dur, (void *)st);
	for (j = 0; j < slow && (all || j < STEPS_SHOW); j++) {
		unsigned m;

		k = order[j];
		nc = steps_causes(&st[k], &sum, c, STEPS_MAX_CAUSES);
		gb_buf_printf(b, "    slow: step %u at %.3f s: %s (%.1fx the median)%s", k + 1,
			      (st[k].start - st[0].start) / 1e9, gb_fmt_ns(t[0], sizeof(t[0]), st[k].end - st[k].start, " "),
			      (double)(st[k].end - st[k].start) / (double)sum.median_ns, nc ? ":" : "");
		for (m = 0; m < nc; m++)
			gb_buf_printf(b, "%s %s", m ? ";" : "", c[m].text);
		if (!nc)
			gb_buf_printf(b, ": nothing gpubpf sees differs from the median step (host code?)");
		gb_buf_putc(b, '\n');
	}
	if (slow > j)
		gb_buf_printf(b, "    and %u more slow step%s (gpubpf steps lists them)\n", slow - j,
			      slow - j == 1 ? "" : "s");
	if (sum.counted >= 3 && !slow)
		gb_buf_printf(b, "    no slow step (none %.1fx the median and %.0f ms longer)\n", STEPS_SLOW,
			      STEPS_SLOW_MIN_NS / 1e6);
	free(order);
}

void steps_text(struct gb_buf *b, const struct steps *s, uint32_t pid, bool all)
{
	unsigned i, shown = 0;

	gb_buf_printf(b, "STEPS\n");
	for (i = 0; i < steps_nproc(s); i++) {
		if (pid && steps_pid(s, i) != pid)
			continue;
		text_proc(b, s, i, all);
		shown++;
	}
	if (!shown)
		gb_buf_printf(b, "  none: no process made GPU calls%s\n", pid ? " (or not that pid)" : "");
	if (!pid)
		steps_ranks_text(b, s);
}

static void json_step(struct gb_json *j, const struct step *st, unsigned k, const struct steps_sum *sum)
{
	gb_json_start_object(j);
	gb_json_uint_field(j, "index", k + 1);
	gb_json_uint_field(j, "start_ns", st->start);
	gb_json_uint_field(j, "end_ns", st->end);
	gb_json_uint_field(j, "dur_ns", st->end - st->start);
	gb_json_uint_field(j, "kernels", st->kernels);
	gb_json_uint_field(j, "syncs", st->syncs);
	gb_json_uint_field(j, "sync_ns", st->sync_ns);
	gb_json_uint_field(j, "allocs", st->allocs);
	gb_json_uint_field(j, "collectives", st->colls);
	gb_json_uint_field(j, "collective_ns", st->coll_ns);
	gb_json_uint_field(j, "jits", st->jits);
	gb_json_uint_field(j, "jit_ns", st->jit_ns);
	gb_json_uint_field(j, "copy_bytes", st->copy_bytes);
	gb_json_uint_field(j, "device_ns", st->dev_ns);
	gb_json_uint_field(j, "max_host_gap_ns", st->max_gap);
	if (st->colls)
		gb_json_uint_field(j, "first_collective_ns", st->coll_at);
	gb_json_bool_field(j, "warmup", st->warmup);
	gb_json_bool_field(j, "partial", st->partial);
	gb_json_bool_field(j, "open", st->open);
	gb_json_bool_field(j, "slow", steps_slow(st, sum));
	gb_json_end_object(j);
}

void steps_json(struct gb_json *j, const struct steps *s, uint32_t pid, bool all)
{
	struct step_cause c[STEPS_MAX_CAUSES];
	unsigned i, k, n, nc, m;

	gb_json_start_object(j);
	gb_json_name(j, "processes");
	gb_json_start_array(j);
	for (i = 0; i < steps_nproc(s); i++) {
		const struct step *st = steps_of(s, i, &n);
		struct steps_sum sum;
		const char *why;
		enum steps_source src = steps_source(s, i, &why);

		if (pid && steps_pid(s, i) != pid)
			continue;
		steps_summary(st, n, &sum);
		gb_json_start_object(j);
		gb_json_uint_field(j, "pid", steps_pid(s, i));
		gb_json_string_field(j, "comm", steps_comm(s, i));
		gb_json_string_field(j, "source", src == STEPS_NVTX ? "nvtx" : src == STEPS_DETECTED ? "detected" : "none");
		if (src == STEPS_NONE)
			gb_json_string_field(j, "why", why ? why : "no repeating unit of GPU work");
		gb_json_uint_field(j, "steps", sum.counted);
		gb_json_uint_field(j, "warmup_steps", sum.warmup);
		gb_json_uint_field(j, "partial_steps", sum.partial);
		gb_json_uint_field(j, "mean_ns", sum.mean_ns);
		gb_json_uint_field(j, "median_ns", sum.median_ns);
		gb_json_uint_field(j, "p99_ns", sum.p99_ns);
		gb_json_uint_field(j, "max_ns", sum.max_ns);
		gb_json_name(j, "slow");
		gb_json_start_array(j);
		for (k = 0; k < n; k++) {
			if (!steps_slow(&st[k], &sum))
				continue;
			nc = steps_causes(&st[k], &sum, c, STEPS_MAX_CAUSES);
			gb_json_start_object(j);
			gb_json_uint_field(j, "index", k + 1);
			gb_json_uint_field(j, "start_ns", st[k].start);
			gb_json_uint_field(j, "dur_ns", st[k].end - st[k].start);
			gb_json_name(j, "causes");
			gb_json_start_array(j);
			for (m = 0; m < nc; m++) {
				gb_json_start_object(j);
				gb_json_string_field(j, "cause", c[m].what);
				gb_json_uint_field(j, "extra_ns", c[m].ns);
				gb_json_string_field(j, "text", c[m].text);
				gb_json_end_object(j);
			}
			gb_json_end_array(j);
			gb_json_end_object(j);
		}
		gb_json_end_array(j);
		if (all) {
			gb_json_name(j, "all");
			gb_json_start_array(j);
			for (k = 0; k < n; k++)
				json_step(j, &st[k], k, &sum);
			gb_json_end_array(j);
		}
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	gb_json_name(j, "ranks");
	steps_ranks_json(j, s);
	gb_json_end_object(j);
}

void steps_csv(struct gb_buf *b, const struct steps *s, uint32_t pid)
{
	unsigned i, k, n;

	gb_buf_printf(b, "pid,step,start_ns,end_ns,dur_ns,kernels,syncs,sync_ns,allocs,collectives,collective_ns,"
		      "jits,jit_ns,copy_bytes,device_ns,max_host_gap_ns,warmup,partial,slow\n");
	for (i = 0; i < steps_nproc(s); i++) {
		const struct step *st = steps_of(s, i, &n);
		struct steps_sum sum;

		if (pid && steps_pid(s, i) != pid)
			continue;
		steps_summary(st, n, &sum);
		for (k = 0; k < n; k++)
			gb_buf_printf(b, "%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%" PRIu64 ",%u,%u,%" PRIu64
				      ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,%d,%d\n",
				      steps_pid(s, i), k + 1, st[k].start, st[k].end, st[k].end - st[k].start,
				      st[k].kernels, st[k].syncs, st[k].sync_ns, st[k].allocs, st[k].colls,
				      st[k].coll_ns, st[k].jits, st[k].jit_ns, st[k].copy_bytes, st[k].dev_ns,
				      st[k].max_gap, st[k].warmup, st[k].partial, steps_slow(&st[k], &sum));
	}
}

/* ---- across ranks: the processes of one NCCL communicator, steps matched by index ---- */

#define JOB_MAX_PROCS	1024

struct job {
	uint64_t comm;
	bool arrivals;			/* matched by when each rank reached the step's first collective */
	unsigned nprocs, matched;	/* processes; counted steps all of them have */
	uint64_t skew_median, skew_max;	/* spread of the matched steps' ends */
	unsigned skew_max_at;		/* the matched step (1-based) with the widest spread */
	uint32_t last_pid, last_rank;	/* the rank that ended last most often */
	unsigned last_count;
	uint64_t last_by;		/* by how much (median, over the steps it was last) */
};

/* the k-th counted step of process i, or NULL */
static const struct step *counted_step(const struct steps *s, unsigned i, unsigned k)
{
	unsigned n, j, seen = 0;
	const struct step *st = steps_of(s, i, &n);

	for (j = 0; j < n; j++)
		if (counted(&st[j]) && seen++ == k)
			return &st[j];
	return NULL;
}

static bool job_of(const struct steps *s, uint64_t comm, struct job *jb)
{
	unsigned idx[JOB_MAX_PROCS], np = 0, i, k, nby = 0, *last_n = NULL, *last_at = NULL, best = 0;
	uint64_t *skew = NULL, *by = NULL;
	uint32_t r, nr;
	bool ok = false;

	memset(jb, 0, sizeof(*jb));
	jb->comm = comm;
	jb->matched = UINT32_MAX;
	for (i = 0; i < steps_nproc(s) && np < JOB_MAX_PROCS; i++) {
		unsigned n;
		struct steps_sum sum;

		const struct step *st;

		if (steps_nccl(s, i, &r, &nr) != comm)
			continue;
		st = steps_of(s, i, &n);	/* n is set here: not in the same call's arguments */
		steps_summary(st, n, &sum);
		idx[np++] = i;
		jb->matched = sum.counted < jb->matched ? sum.counted : jb->matched;
	}
	jb->nprocs = np;
	if (np < 2 || !jb->matched || jb->matched == UINT32_MAX)
		return false;
	skew = calloc(jb->matched, sizeof(*skew));
	by = calloc(jb->matched, sizeof(*by));
	last_at = calloc(jb->matched, sizeof(*last_at));
	last_n = calloc(np, sizeof(*last_n));
	if (!skew || !by || !last_at || !last_n)
		goto out;
	/*
	 * Per matched step: when each rank reached its first collective (in a
	 * synchronous job every rank then leaves it together: the late one is
	 * the one the others waited for), else when its step ended; the spread,
	 * and which rank came last.
	 */
	jb->arrivals = true;
	for (k = 0; k < jb->matched && jb->arrivals; k++)
		for (i = 0; i < np; i++)
			jb->arrivals &= counted_step(s, idx[i], k)->coll_at != 0;
	for (k = 0; k < jb->matched; k++) {
		uint64_t lo = UINT64_MAX, hi = 0;

		for (i = 0; i < np; i++) {
			const struct step *st = counted_step(s, idx[i], k);
			uint64_t t = jb->arrivals ? st->coll_at : st->end;

			lo = t < lo ? t : lo;
			if (t >= hi) {
				hi = t;
				last_at[k] = i;
			}
		}
		skew[k] = hi - lo;
		if (skew[k] > jb->skew_max) {
			jb->skew_max = skew[k];
			jb->skew_max_at = k + 1;
		}
		last_n[last_at[k]]++;
	}
	for (i = 1; i < np; i++)
		if (last_n[i] > last_n[best])
			best = i;
	jb->last_pid = steps_pid(s, idx[best]);
	steps_nccl(s, idx[best], &jb->last_rank, &nr);
	jb->last_count = last_n[best];
	for (k = 0; k < jb->matched; k++)
		if (last_at[k] == best)
			by[nby++] = skew[k];
	qsort(by, nby, sizeof(*by), cmp_u64);
	jb->last_by = nby ? by[nby / 2] : 0;
	qsort(skew, jb->matched, sizeof(*skew), cmp_u64);
	jb->skew_median = skew[jb->matched / 2];
	ok = true;
out:
	free(skew);
	free(by);
	free(last_at);
	free(last_n);
	return ok;
}

/* each communicator once, in the order its first process comes */
static bool first_of_comm(const struct steps *s, unsigned i, uint64_t *comm)
{
	uint32_t r, nr;
	unsigned j;

	*comm = steps_nccl(s, i, &r, &nr);
	if (!*comm)
		return false;
	for (j = 0; j < i; j++)
		if (steps_nccl(s, j, &r, &nr) == *comm)
			return false;
	return true;
}

void steps_ranks_text(struct gb_buf *b, const struct steps *s)
{
	struct job jb;
	uint64_t comm;
	unsigned i;

	for (i = 0; i < steps_nproc(s); i++) {
		if (!first_of_comm(s, i, &comm) || !job_of(s, comm, &jb))
			continue;
		gb_buf_printf(b, "  ranks of NCCL communicator %016llx: %u process%s, %u step%s matched by index\n",
			      (unsigned long long)comm, jb.nprocs, jb.nprocs == 1 ? "" : "es", jb.matched,
			      jb.matched == 1 ? "" : "s");
		gb_buf_printf(b, "    spread of the ranks' %s: median %.3f ms, max %.3f ms (matched step %u)\n",
			      jb.arrivals ? "arrivals at each step's first collective" : "step ends",
			      jb.skew_median / 1e6, jb.skew_max / 1e6, jb.skew_max_at);
		gb_buf_printf(b, "    rank %u (pid %u) came last in %u of %u steps, by a median of %.3f ms\n",
			      jb.last_rank, jb.last_pid, jb.last_count, jb.matched, jb.last_by / 1e6);
	}
}

void steps_ranks_json(struct gb_json *j, const struct steps *s)
{
	struct job jb;
	uint64_t comm;
	unsigned i;

	gb_json_start_array(j);
	for (i = 0; i < steps_nproc(s); i++) {
		if (!first_of_comm(s, i, &comm) || !job_of(s, comm, &jb))
			continue;
		gb_json_start_object(j);
		gb_json_uint_field(j, "comm_id", comm);
		gb_json_uint_field(j, "processes", jb.nprocs);
		gb_json_uint_field(j, "matched_steps", jb.matched);
		gb_json_string_field(j, "skew_of", jb.arrivals ? "collective_arrival" : "step_end");
		gb_json_uint_field(j, "skew_median_ns", jb.skew_median);
		gb_json_uint_field(j, "skew_max_ns", jb.skew_max);
		gb_json_uint_field(j, "skew_max_step", jb.skew_max_at);
		gb_json_uint_field(j, "last_rank", jb.last_rank);
		gb_json_uint_field(j, "last_pid", jb.last_pid);
		gb_json_uint_field(j, "last_count", jb.last_count);
		gb_json_uint_field(j, "last_by_median_ns", jb.last_by);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
}
