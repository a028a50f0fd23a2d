// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* collector.c - ring-buffer records to events: one table of record kinds (collector.h) */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "collector.h"
#include "cupti/cupti_join.h"
#include "ioctl/ioctl.h"
#include "host/elfsym.h"
#include "host/procmaps.h"
#include "host/sideband.h"
#include "stacks/stack.h"
#include "core/util.h"
#include "coll/nccl_comms.h"
#include "libops/libops.h"
#include "graph/graphs.h"
#include "core/vec.h"

struct proc {
	pid_t pid;
	char container[40];	/* procmaps_container (+ procmaps_pidns_unique), read while it maps GPU code; "-": host */
	char *rank;		/* procmaps_rank, read then too; "" none, NULL not read */
	struct hmap names;	/* name_key(handle or stub address) -> interned name */
	struct hmap nostub;	/* name_key(stub address) -> no name found for it: NOSTUB_FOR_GOOD,
				 * else maps.gen + 1 of then (in no mapping: asked again once they change) */
	uint64_t reread_ns;	/* when /proc/PID/maps was last read for an address in no mapping */
	struct hmap rt_launch;	/* tid -> 1: an entry-only runtime launch awaits its driver launch */
	struct hmap comms;	/* tid -> interned thread name (side-band, else /proc); "" unknown */
	uint32_t comm_tid;	/* the last record's thread, whose comms entry is comm_name (0: none) */
	const char *comm_name;
	char last_comm[GB_COMM_LEN];	/* the last record's comm bytes, interned as last_name */
	const char *last_name;
	struct hmap open_tids;	/* tid -> how many of its calls are open (announced, not ended) */
	unsigned nopen;		/* the sum of those */
	uint64_t cupti_gen;	/* maps.gen when cupti_lib was looked for */
	bool cupti_lib;		/* it maps gpubpf's CUPTI library */
	struct hmap nccl;	/* NCCL communicator handle -> state (nccl_comms.c) */
	struct hmap libops;	/* library handle/descriptor -> state (libops/libops.c) */
	struct gb_graphs *graphs;	/* CUDA/HIP graph captures and execs (graph/graphs.c) */
	struct gb_maps maps;	/* file mappings: timeline (side-band) + /proc snapshot */
	bool have_maps;		/* maps holds something */
	bool complete;		/* seen from its fork or exec: the timeline has everything */
	bool seeded;		/* /proc read once (it existed before the side-band told us) */
	bool has_events;
	pid_t fork_parent;	/* forked at fork_ts and not exec'd since: its mappings are
				 * the parent's of then, copied only if asked for */
	uint64_t fork_ts;
	uint64_t *execs;	/* times it exec'd: a handle means something else after */
	unsigned nexec, capexec;
	uint64_t exit_ns;	/* 0 while alive */
	uint64_t sb_ns;		/* the newest side-band event of it (exec, mapping, name) */
	int exit_sig;		/* the signal of a crash (GB_REC_EXIT), else 0 */
	uint32_t ns_pid;	/* its id in its own pid namespace (from its calls) */
	const char *exit_comm;	/* its name, from that record */
	bool exit_said;		/* its process_exit event was emitted */
};

/* handles and stub addresses belong to one program image: key them by exec generation */
static uint64_t name_key(const struct proc *p, uint64_t handle, uint64_t ts)
{
	unsigned gen = 0;

	while (gen < p->nexec && p->execs[gen] <= ts)
		gen++;
	return handle ^ ((uint64_t)gen * 0x9e3779b97f4a7c15ull);
}

struct elf_entry {
	struct elf_syms *syms;	/* NULL: could not be read */
};

struct collector {
	struct collector_ops ops;
	struct intern *strs;
	struct hmap procs;	/* pid -> struct proc */
	struct proc *last;	/* the last record's process (records come in runs) */
	struct hmap elfs;	/* hash(dev, ino) -> struct elf_entry */
	struct hmap pidns;	/* pid namespace inode -> the id of the first seen (procmaps_pidns_unique) */
	struct collector_stats st;
	struct stack_table *stk;	/* NULL: no stacks */
	int stack_mode;
	struct cupti_join *join;	/* NULL: events go straight to the sink */
	struct ioctl_decoder *ioctl;	/* NULL: ioctl records are not decoded */
	uint64_t last_ts;	/* newest record time handled: how far the ring is read */
	uint64_t sb_read_ns;	/* side-band read up to here (0: no side-band stream) */
	pid_t *exited;		/* processes whose exit was seen, to reap */
	unsigned nexited, capexited;
	uint64_t reap_at;	/* the earliest time one of them may go (0: look now) */
	uint64_t last_prune;	/* when replaced mappings were last pruned */
	struct hmap open;	/* open_key(tid, ts) -> struct open_call: announced, not ended */
	unsigned nopen;
	struct open_call *spare;	/* ended ones kept for reuse (a malloc and a free a call were 10%) */
	unsigned nspare;
};

/*
 * A call that can block, announced at entry (GB_RF_OPEN): held, decoded,
 * until its end record comes, or written as in flight when its process
 * dies, the recording stops or the trace is dumped.
 */
struct open_call {
	struct gb_event ev;
	bool stuck_seen;	/* collector_oldest_open reported it already */
	struct open_call *next;	/* on the spare list */
};
#define OPEN_SPARE_MAX	1024

static struct open_call *open_new(struct collector *c)
{
	struct open_call *oc = c->spare;

	if (!oc)
		return calloc(1, sizeof(*oc));
	c->spare = oc->next;
	c->nspare--;
	oc->stuck_seen = false;	/* the caller sets ev */
	oc->next = NULL;
	return oc;
}

static void open_done(struct collector *c, struct open_call *oc)
{
	if (!oc)
		return;
	if (c->nspare >= OPEN_SPARE_MAX) {
		free(oc);
		return;
	}
	oc->next = c->spare;
	c->spare = oc;
	c->nspare++;
}

static void close_open(struct collector *c, pid_t pid, uint64_t now_ns);
static void say_exit(struct collector *c, struct proc *p);

static uint64_t open_key(uint32_t tid, uint64_t ts)
{
	return (ts * 0x9e3779b97f4a7c15ull) ^ tid;
}

/* the process ended at ts: its state goes once what it sent has been read */
static void proc_exited(struct collector *c, struct proc *p, uint64_t ts)
{
	if (p->exit_ns)
		return;
	p->exit_ns = ts ? ts : 1;
	if (!GB_GROW(c->exited, c->capexited, c->nexited + 1))
		c->exited[c->nexited++] = p->pid;
	c->reap_at = 0;
}

struct collector *collector_new(const struct collector_ops *ops)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ops = *ops;
	c->strs = intern_new();
	if (!c->strs) {
		free(c);
		return NULL;
	}
	return c;
}

static struct proc *get_proc(struct collector *c, pid_t pid)
{
	struct proc *p = c->last;

	if (p && p->pid == pid)
		return p;
	p = hmap_get(&c->procs, (uint64_t)pid);
	if (p)
		return c->last = p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (hmap_put(&c->procs, (uint64_t)pid, p)) {
		free(p);
		return NULL;
	}
	c->st.procs_live++;
	return c->last = p;
}

/* the state a process had: pid reuse starts it afresh (the struct stays: callers hold it) */
static void clear_proc(struct proc *p)
{
	hmap_free(&p->names);
	hmap_free(&p->nostub);
	p->reread_ns = 0;
	hmap_free(&p->rt_launch);
	hmap_free(&p->comms);
	p->comm_tid = 0;
	hmap_free(&p->open_tids);
	p->nopen = 0;
	p->cupti_gen = 0;
	p->cupti_lib = false;
	nccl_comms_free(&p->nccl);
	libops_free(&p->libops);
	graphs_free(p->graphs);
	p->graphs = NULL;
	procmaps_free(&p->maps);
	free(p->execs);
	p->execs = NULL;
	p->nexec = p->capexec = 0;
	p->have_maps = p->complete = p->seeded = false;
	p->container[0] = 0;
	free(p->rank);
	p->rank = NULL;
	p->fork_parent = 0;
	p->exit_ns = 0;
	p->exit_sig = 0;
	p->exit_comm = NULL;
	p->exit_said = false;
	p->has_events = false;
	p->ns_pid = 0;
	p->sb_ns = 0;
	p->last_comm[0] = 0;
	p->last_name = NULL;
}

/* a thread's name changes: the last-thread cache forgets it */
static void comm_put(struct proc *p, uint64_t tid, const char *name)
{
	p->comm_tid = 0;
	hmap_put(&p->comms, tid, (void *)name);
}

static void comm_del(struct proc *p, uint64_t tid)
{
	p->comm_tid = 0;
	hmap_del(&p->comms, tid);
}

static void free_proc(struct proc *p)
{
	clear_proc(p);
	free(p);
}

/*
 * What /proc says now, merged under the timeline: a process that was
 * running before the side-band stream started (or whose fork we missed).
 * Gone: the timeline is all there is.
 */
static void read_proc_maps(struct collector *c, struct proc *p)
{
	struct gb_maps m;
	bool first = !p->seeded;

	p->seeded = true;
	c->st.maps_reads++;
	if (procmaps_read(p->pid, &m))
		return;
	procmaps_merge(&p->maps, &m);
	procmaps_free(&m);
	p->have_maps = p->maps.n > 0;
	/* a GPU process seen for the first time: open its files while they can be reached */
	if (first && c->stk)
		stack_note_maps(c->stk, p->pid, &p->maps);
}

void collector_snapshot_maps(struct collector *c, pid_t pid)
{
	struct proc *p = get_proc(c, pid);

	if (!p)
		return;
	/* the side-band stream may hold mappings newer than we took */
	if (c->ops.sync)
		c->ops.sync(c->ops.ctx);
	if (!p->complete)
		read_proc_maps(c, p);
}

static struct elf_syms *elf_for(struct collector *c, pid_t pid, const struct gb_map *m);

/*
 * A process that maps GPU code: what only it can reach (its container's
 * files) is read now, host stubs' symbols and stack modules both, so its
 * launches are named and its stacks unwound even if it is gone (and its
 * mount namespace with it) before its records are read.
 */
/* its rank in a distributed job, from its environment, once while it lives */
static void read_rank(struct proc *p)
{
	char r[256];

	if (!p->rank)
		p->rank = strdup(procmaps_rank(p->pid, r, sizeof(r)) ? "" : r);
}

/*
 * Its container, once: "-" for the host's. A pid namespace's inode number
 * comes back once the namespace is gone, so two containers run one after
 * the other could share "pidns-INODE": the later gets the kernel's id too.
 */
static void read_container(struct collector *c, struct proc *p)
{
	uint64_t id;

	if (p->container[0])
		return;
	if (procmaps_container(p->pid, p->container, sizeof(p->container))) {
		strcpy(p->container, "-");
		return;
	}
	if (!procmaps_pidns_id(p->pid, &id))
		procmaps_pidns_unique(&c->pidns, p->container, sizeof(p->container), id);
}

void collector_pin_files(struct collector *c, pid_t pid)
{
	struct proc *p = hmap_get(&c->procs, (uint64_t)pid);
	unsigned i;

	if (!p)
		return;
	read_container(c, p);
	read_rank(p);
	for (i = 0; i < p->maps.n; i++)
		if (p->maps.v[i].path && !procmaps_same_file(p->maps.v[i].path, &p->maps.v[i]))
			elf_for(c, pid, &p->maps.v[i]);
	if (c->stk)
		stack_note_maps(c->stk, pid, &p->maps);
}

/*
 * An address in no mapping we know: the side band first, then /proc, at
 * most every REREAD_NS a process seen mid-run. A torch process maps ~600
 * files (~1 ms a read); on an H100, reading them for every runtime launch
 * whose stub is in no file mapping made the recorder fall behind at
 * ~7,000 events/s, and on an H200 for every new stack with a frame in
 * anonymous code (1,000 new stacks a second under record -p): 90% of the
 * events dropped. New files reach us through the side band anyway; /proc
 * only fills what it lost.
 */
#define REREAD_NS	100000000ull

static void reread_maps(struct collector *c, struct proc *p)
{
	uint64_t now = gb_now_mono_ns();

	if (c->ops.sync)
		c->ops.sync(c->ops.ctx);
	if (!p->complete && now - p->reread_ns >= REREAD_NS) {
		p->reread_ns = now;
		read_proc_maps(c, p);
	}
}

static const struct gb_maps *refresh_maps(void *ctx, pid_t pid)
{
	struct collector *c = ctx;
	struct proc *p = get_proc(c, pid);

	if (!p)
		return NULL;
	reread_maps(c, p);
	return p->have_maps ? &p->maps : NULL;
}

/*
 * A fork event for a pid we know: a late one (the child's own exec,
 * mappings or exit were read before it) or the pid's reuse. Late: the
 * process has not exited before the fork, and the side band told us of
 * it after the fork's time.
 */
static bool fork_read_late(const struct proc *p, uint64_t fork_ns)
{
	if (p->exit_ns)
		return p->exit_ns > fork_ns;
	return p->sb_ns > fork_ns;
}

static int emit_cb(void *ctx, const struct gb_event *ev);

/*
 * Its end, by at: calls still open, graphs, its process_exit event; then
 * nothing of it is left. The struct stays (a reused pid's: callers hold it).
 */
static void proc_gone(struct collector *c, struct proc *p, uint64_t at)
{
	if (!p->exit_ns)
		p->exit_ns = at;
	close_open(c, p->pid, p->exit_ns);
	graphs_flush(p->graphs, emit_cb, c);
	say_exit(c, p);
	if (c->stk)
		stack_forget_pid(c->stk, p->pid);
	if (c->join)
		cupti_join_forget(c->join, (uint32_t)p->pid);
	clear_proc(p);
}

/*
 * A forked child has its parent's mappings. Most children exec at once,
 * so they are copied only when an event of the child needs them.
 */
static void sb_fork(struct collector *c, const struct sb_event *ev)
{
	struct proc *p = hmap_get(&c->procs, (uint64_t)ev->pid), *parent;
	const char *name;
	bool late = false;

	parent = hmap_get(&c->procs, (uint64_t)ev->ppid);
	/* a new task starts with the name of the thread that made it */
	name = parent ? hmap_get(&parent->comms, ev->ptid) : NULL;
	if (ev->pid == ev->ppid) {	/* a thread */
		if (p && name)
			comm_put(p, ev->tid, name);
		else if (p)
			comm_del(p, ev->tid);	/* not an older thread's name */
		return;
	}
	if (!parent && !p)
		return;		/* a parent we never knew: /proc when needed */
	if (p && fork_read_late(p, ev->ts_ns)) {
		/*
		 * Its own events were read first (the side band is merged by
		 * time within a read, not across reads: the child ran on another
		 * CPU, whose buffer was read before this one's fork). Exec'd or
		 * mapped since: that is its timeline; else it inherits.
		 */
		if (p->nexec || p->maps.n || !parent)
			return;
		late = true;
	} else if (p) {
		proc_gone(c, p, ev->ts_ns);	/* the pid was reused: the old process is over */
	} else if (!(p = get_proc(c, (pid_t)ev->pid))) {
		return;
	}
	if (!parent)
		return;
	if (name && !(late && hmap_get(&p->comms, ev->tid)))
		comm_put(p, ev->tid, name);
	p->fork_parent = (pid_t)ev->ppid;
	p->fork_ts = ev->ts_ns;
	p->complete = parent->complete || parent->seeded;
}

/* the mappings a child got at fork, from its parent (if we still know it) */
static void inherit_maps(struct collector *c, struct proc *p)
{
	struct proc *parent = hmap_get(&c->procs, (uint64_t)p->fork_parent);

	p->fork_parent = 0;
	if (!parent) {
		p->complete = false;
		return;
	}
	if (!parent->complete && !parent->seeded)
		read_proc_maps(c, parent);
	if (parent->fork_parent)
		inherit_maps(c, parent);
	procmaps_copy(&p->maps, &parent->maps, p->fork_ts);
	p->have_maps = p->maps.n > 0;
	p->complete = parent->complete || parent->seeded;
}

void collector_sideband_read(struct collector *c, uint64_t now_ns)
{
	if (now_ns > c->sb_read_ns)
		c->sb_read_ns = now_ns;
}

void collector_sideband(struct collector *c, const struct sb_event *ev)
{
	struct proc *p;
	struct gb_map m;
	size_t it = 0;
	uint64_t k;
	void *v;

	switch (ev->type) {
	case SB_LOST:
		/* some mappings or execs never came: no timeline is whole now, /proc fills gaps */
		while (hmap_next(&c->procs, &it, &k, &v))
			((struct proc *)v)->complete = false;
		return;
	case SB_MMAP:
		if (!ev->str || ev->str[0] != '/' || !(p = get_proc(c, (pid_t)ev->pid)))
			return;
		sideband_map(ev, &m);
		if (!procmaps_map(&p->maps, &m, ev->ts_ns))
			p->have_maps = true;
		if (ev->ts_ns > p->sb_ns)
			p->sb_ns = ev->ts_ns;
		return;
	case SB_COMM:
		if (!(p = get_proc(c, (pid_t)ev->pid)))
			return;
		if (ev->ts_ns > p->sb_ns)
			p->sb_ns = ev->ts_ns;
		if (ev->str)
			comm_put(p, ev->tid, intern_str(c->strs, ev->str));
		if (!ev->exec)
			return;
		/* a new program: nothing of the old image is mapped any more */
		if (p->fork_parent && !p->has_events)
			p->fork_parent = 0;	/* forked, exec'd, nothing asked: nothing to copy */
		else if (p->fork_parent)
			inherit_maps(c, p);
		procmaps_unmap_all(&p->maps, ev->ts_ns);
		if (!GB_GROW(p->execs, p->capexec, p->nexec + 1))
			p->execs[p->nexec++] = ev->ts_ns;
		p->complete = true;
		if (c->stk)
			stack_forget_pid(c->stk, p->pid);
		return;
	case SB_FORK:
		sb_fork(c, ev);
		return;
	case SB_EXIT:
		p = hmap_get(&c->procs, (uint64_t)ev->pid);
		if (p && ev->pid == ev->tid)
			proc_exited(c, p, ev->ts_ns);
		return;
	}
}

int collector_enable_stacks(struct collector *c, int mode,
			    int (*out)(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n),
			    void *ctx)
{
	struct stack_ops so = { .out = out, .ctx = ctx };

	c->stk = stack_table_new(&so);
	if (!c->stk)
		return -ENOMEM;
	c->stack_mode = mode;
	stack_set_refresh(c->stk, refresh_maps, c);
	return 0;
}

struct stack_table *collector_stack_table(struct collector *c)
{
	return c->stk;
}

/* the process's mappings as they were at ts */
static const struct gb_maps *proc_maps(struct collector *c, struct proc *p, uint64_t ts)
{
	if (p->fork_parent)
		inherit_maps(c, p);
	if (!p->complete && !p->seeded)
		read_proc_maps(c, p);
	p->maps.at_ns = ts;
	return p->have_maps ? &p->maps : NULL;
}

/*
 * The return addresses an fp record carries after its fixed part (at off):
 * NULL when there are none or the record is too short for what it claims.
 */
static const uint64_t *rec_ips(const void *data, size_t size, size_t off, unsigned *n)
{
	const struct gb_rec *r = data;

	*n = r->nips;
	if (!*n || *n > GB_STACK_FP_DEPTH || size < off + (size_t)*n * sizeof(uint64_t))
		return NULL;
	return (const uint64_t *)((const char *)data + off);
}

/* the event's stack: fp addresses from the record, or the DWARF stack unwound before */
static uint32_t event_stack(struct collector *c, struct proc *p, const struct gb_rec *r,
			    const uint64_t *ips, unsigned nips)
{
	uint64_t all[GB_STACK_FP_DEPTH + 1];
	uint32_t id = 0;

	if (!c->stk)
		return 0;
	if (c->stack_mode == GB_STACK_FP && ips) {
		nips = stack_copy_caller(all, ips, nips, GB_STACK_FP_DEPTH + 1, r->caller);
		id = stack_from_fp(c->stk, p->pid, proc_maps(c, p, r->ts_ns), all, nips);
	}
	else if (c->stack_mode == GB_STACK_DWARF)
		id = stack_take_pending(c->stk, r->tid, r->ts_ns);
	/* Python frames (--python) arrived ahead of the call, like DWARF copies */
	return stack_add_python(c->stk, id, r->tid, r->ts_ns);
}

static struct elf_syms *elf_for(struct collector *c, pid_t pid, const struct gb_map *m)
{
	uint64_t key = ((uint64_t)m->dev_major << 56) ^ ((uint64_t)m->dev_minor << 40) ^ m->inode;
	struct elf_entry *e = hmap_get(&c->elfs, key);

	if (e)
		return e->syms;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	/*
	 * binaries of containers live under the process's root; opened, not
	 * looked at and then opened: a process that exits in between (its
	 * root gone) left the file unread for good, and none of its runtime
	 * launches named, under load (discover_container.sh, 2 runs in ~55)
	 */
	e->syms = elf_syms_fdopen(procmaps_open(pid, m));
	if (hmap_put(&c->elfs, key, e)) {
		elf_syms_close(e->syms);
		free(e);
		return NULL;
	}
	return e->syms;
}

#define NOSTUB_FOR_GOOD ((void *)UINTPTR_MAX)	/* its mapping known, no symbol there */

/*
 * The kernel a runtime launch names by its host-stub address, in the image
 * mapped at ts; *mapped: the address was in a file mapping we know
 */
static const char *stub_name(struct collector *c, struct proc *p, uint64_t addr, uint64_t ts, bool *mapped)
{
	const struct gb_map *m;
	struct elf_syms *s;
	const char *sym, *name;
	uint64_t delta;
	char *dem;

	proc_maps(c, p, ts);
	m = procmaps_find(&p->maps, addr);
	if (!m) {
		/* a library mapped since we last looked */
		reread_maps(c, p);
		p->maps.at_ns = ts;
		m = procmaps_find(&p->maps, addr);
	}
	if (!m && !p->seeded) {
		/* a timeline that misses it (events the kernel lost): what /proc shows, once */
		read_proc_maps(c, p);
		p->maps.at_ns = ts;
		m = procmaps_find(&p->maps, addr);
	}
	*mapped = m != NULL;
	if (!m || !(s = elf_for(c, p->pid, m)))
		return NULL;
	sym = elf_syms_at(s, addr - m->start + m->offset, &delta);
	if (!sym)
		return NULL;
	dem = gb_demangle(sym);
	name = intern_str(c->strs, dem ? dem : sym);
	free(dem);
	return name;
}

static const char *kernel_name(struct collector *c, struct proc *p, const struct gb_event *ev)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	uint64_t key = name_key(p, ev->handle, ev->ts_ns);
	const char *name;
	bool mapped = false;
	void *miss;

	if (!ev->handle)
		return NULL;
	name = hmap_get(&p->names, key);
	if (name)
		return name;
	if (ti->shape != GB_SH_LAUNCH_RT && ti->shape != GB_SH_LAUNCH_RT_EX)
		return NULL;
	/*
	 * asked before, in vain: not again per launch; an address in no
	 * mapping again once the mappings changed (the side band's event of
	 * the image came after the launch was read: one miss named none of
	 * a short-lived process's launches)
	 */
	miss = hmap_get(&p->nostub, key);
	if (miss == NOSTUB_FOR_GOOD || (miss && (uintptr_t)miss == p->maps.gen + 1))
		return NULL;
	name = stub_name(c, p, ev->handle, ev->ts_ns, &mapped);
	if (name)
		hmap_put(&p->names, key, (void *)name);
	else
		hmap_put(&p->nostub, key, mapped ? NOSTUB_FOR_GOOD : (void *)(uintptr_t)(p->maps.gen + 1));
	return name;
}

void collector_set_join(struct collector *c, struct cupti_join *j)
{
	c->join = j;
}

void collector_set_ioctl(struct collector *c, struct ioctl_decoder *d)
{
	c->ioctl = d;
}

static int sink(struct collector *c, const struct gb_event *ev)
{
	c->st.events++;
	if (ev->type < GB_T__COUNT)
		c->st.by_type[ev->type]++;
	return c->ops.event ? c->ops.event(c->ops.ctx, ev) : 0;
}

static void join_out(void *ctx, const struct gb_event *ev)
{
	sink(ctx, ev);
}

/*
 * Whether CUPTI records may come for a launch of this process: it maps
 * gpubpf's CUPTI library (loaded at cuInit through the injection variable,
 * or injected into it running as a copy named gpubpf_cupti-*.so), or the
 * join has had one from it. Only such launches wait in the join; the
 * others (every process --cupti was not given to) would wait for nothing,
 * and waiting cost 30% of the recorder at 100k launches/s.
 */
static bool may_cupti(struct collector *c, const struct gb_event *ev)
{
	struct proc *p = hmap_get(&c->procs, ev->pid);
	const struct gb_maps *m;
	unsigned i;

	if (!p || cupti_join_pid_seen(c->join, ev->pid))
		return true;
	m = proc_maps(c, p, ev->ts_ns);
	if (!m)
		return false;
	if (p->cupti_gen != m->gen) {
		p->cupti_gen = m->gen;
		p->cupti_lib = false;
		for (i = 0; i < m->n && !p->cupti_lib; i++)
			p->cupti_lib = m->v[i].path && strstr(m->v[i].path, "gpubpf_cupti");
	}
	return p->cupti_lib;
}

/* every event passes the join: it may hold a launch for its device time */
int collector_emit(struct collector *c, const struct gb_event *ev)
{
	if (c->join && (gb_event_cat(ev) != GB_CAT_LAUNCH || may_cupti(c, ev)) &&
	    cupti_join_host(c->join, ev))
		return 0;
	return sink(c, ev);
}

static int emit_cb(void *ctx, const struct gb_event *ev)
{
	return collector_emit(ctx, ev);
}

void collector_tick(struct collector *c, uint64_t now_ns)
{
	if (c->join)
		cupti_join_drain(c->join, now_ns, join_out, c);
}

void collector_finish(struct collector *c)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	close_open(c, 0, c->last_ts > gb_now_mono_ns() ? c->last_ts : gb_now_mono_ns());
	while (hmap_next(&c->procs, &it, &k, &v)) {
		struct proc *p = v;

		graphs_flush(p->graphs, emit_cb, c);
		say_exit(c, p);
	}
	if (c->join)
		cupti_join_flush(c->join, join_out, c);
}

/*
 * Launches recorded at entry only (the default, --lean) leave BPF unable to
 * see that a driver launch runs inside a runtime launch. Records of one thread reach the
 * ring in order, and the runtime makes its driver launch before it
 * returns: an entry-only driver launch that follows an entry-only runtime
 * launch of the same thread is that launch's own (counted once). A runtime
 * launch that failed before reaching the driver would lend its mark to the
 * thread's next direct driver launch: rare, and said in the README.
 */
static void mark_lean_nested(struct proc *p, const struct gb_rec *r, struct gb_event *ev)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);

	if (gb_event_cat(ev) != GB_CAT_LAUNCH || (r->flags & GB_RF_NESTED))
		return;
	/* a runtime launch with its return (sampled, or --launch-returns) had
	 * its driver launch marked in BPF; a driver launch sampled for its
	 * return inside an entry-only runtime launch is marked here */
	if (ti->api == GB_API_CUDA_RT && !(r->flags & GB_RF_RET))
		hmap_put(&p->rt_launch, r->tid, (void *)1);
	else if (ti->api == GB_API_CUDA_DRV && p->rt_launch.n && hmap_del(&p->rt_launch, r->tid))
		ev->flags |= GB_EF_NESTED;
}

/*
 * The thread's name: from the record where BPF put it there, else from
 * the side-band's comm and fork records, else (a thread that existed
 * before the recorder) read once from /proc. Side-band records are read
 * before the ring, so a rename shows on calls made just before it too.
 */
static const char *thread_comm(struct collector *c, struct proc *p, const struct gb_rec *r)
{
	char path[64], buf[32];
	const char *name;
	size_t n;
	FILE *f;

	if (r->comm[0]) {
		/* a thread's calls come in runs: the same bytes, the same interned name */
		if (p->last_name && !memcmp(p->last_comm, r->comm, sizeof(p->last_comm)))
			return p->last_name;
		name = intern_strn(c->strs, r->comm, strnlen(r->comm, sizeof(r->comm)));
		if (name) {
			memcpy(p->last_comm, r->comm, sizeof(p->last_comm));
			p->last_name = name;
		}
		return name;
	}
	/* a thread's calls come in runs: its name is kept at hand */
	if (p->comm_tid && p->comm_tid == r->tid)
		return p->comm_name;
	name = hmap_get(&p->comms, r->tid);
	if (!name) {
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", r->pid, r->tid);
		f = fopen(path, "re");
		if (!f) {
			snprintf(path, sizeof(path), "/proc/%u/comm", r->pid);
			f = fopen(path, "re");
		}
		n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == 0))
			n--;
		if (!n && r->tid != r->pid)
			name = hmap_get(&p->comms, r->pid);	/* the process's name */
		if (!name)
			name = intern_strn(c->strs, buf, n);
		if (name)
			comm_put(p, r->tid, name);
	}
	if (name) {
		p->comm_tid = r->tid;
		p->comm_name = name[0] ? name : NULL;
	}
	return name && name[0] ? name : NULL;
}

/* a thread's count of open calls, by one */
static void open_tid_count(struct proc *p, uint32_t tid, bool up)
{
	uintptr_t n;

	if (!p)
		return;
	if (up) {
		void **v = hmap_slot(&p->open_tids, tid);

		if (v) {	/* out of memory: not counted, never swept */
			*v = (void *)((uintptr_t)*v + 1);
			p->nopen++;
		}
		return;
	}
	n = (uintptr_t)hmap_get(&p->open_tids, tid);
	if (n) {
		if (n == 1)
			hmap_del(&p->open_tids, tid);
		else
			hmap_put(&p->open_tids, tid, (void *)(n - 1));
		p->nopen--;
	}
}

/* library ops (cuBLAS, cuDNN...): the launches they make are not marked nested */
static bool type_is_op(unsigned type)
{
	const struct gb_type_info *ti = gb_type_info(type);

	return ti && (ti->tflags & GB_TF_OP);
}

/*
 * A call nested in no other traced call (BPF marks those that are) starts
 * after every call of its thread has returned, but library ops: a launch
 * inside a cuBLAS op is not marked, the op still runs (an op itself that is
 * not nested: nothing of the thread runs). A call of that thread still open
 * here lost its end record to a full ring (counted as a drop there): it is
 * written now without a duration, as BPF writes a call whose return it
 * never saw, not left to look in flight, stuck, until the process exits.
 */
static void close_ended(struct collector *c, struct proc *p, const struct gb_rec *r)
{
	bool all = type_is_op(r->type);
	uint64_t k, keys[16];
	size_t it, n, i;
	void *v;

	do {
		for (it = 0, n = 0; n < 16 && hmap_next(&c->open, &it, &k, &v);) {
			const struct gb_event *o = &((struct open_call *)v)->ev;

			if (o->pid == r->pid && o->tid == r->tid && o->ts_ns < r->ts_ns &&
			    (all || !type_is_op(o->type)))
				keys[n++] = k;
		}
		for (i = 0; i < n; i++) {
			struct open_call *oc = hmap_del(&c->open, keys[i]);

			if (!oc)
				continue;
			c->nopen--;
			c->st.ends_lost++;
			open_tid_count(p, oc->ev.tid, false);
			collector_emit(c, &oc->ev);
			open_done(c, oc);
		}
	} while (n == 16);
}

/* an announced call, until its end: a second announcement of the same call replaces it */
static int hold_open(struct collector *c, struct proc *p, const struct gb_event *ev)
{
	uint64_t k = open_key(ev->tid, ev->ts_ns);
	void **slot = hmap_slot(&c->open, k);
	struct open_call *oc = slot ? *slot : NULL;

	if (!oc) {
		oc = slot ? open_new(c) : NULL;
		if (!oc) {
			if (slot)
				hmap_del(&c->open, k);
			return collector_emit(c, ev);	/* no memory: seen now, as an entry */
		}
		*slot = oc;
		c->nopen++;
		open_tid_count(p, ev->tid, true);
	}
	oc->ev = *ev;
	oc->ev.flags &= ~(GB_EF_DUR | GB_EF_RET);
	return 0;
}

/* the call as it stands at now_ns: running for now - start */
static void open_event(const struct open_call *oc, uint64_t now_ns, struct gb_event *ev)
{
	*ev = oc->ev;
	ev->flags |= GB_EF_INFLIGHT;
	ev->dur_ns = now_ns > ev->ts_ns ? now_ns - ev->ts_ns : 0;
}

/*
 * Calls of pid (every process: pid 0) that will never end: written as in
 * flight at now_ns (the process's death, the end of the recording).
 */
static void close_open(struct collector *c, pid_t pid, uint64_t now_ns)
{
	struct gb_event ev;
	uint64_t k, *keys = NULL;
	size_t it = 0, n = 0, cap = 0, i;
	void *v;

	/*
	 * The keys first, then the deletions (deleting moves entries): starting
	 * the walk over after each one was quadratic, minutes at the end of a
	 * recording whose ring had dropped the ends of ~10^5 calls
	 */
	while (c->nopen && hmap_next(&c->open, &it, &k, &v)) {
		if (pid && ((struct open_call *)v)->ev.pid != (uint32_t)pid)
			continue;
		if (GB_GROW(keys, cap, n + 1))
			break;	/* out of memory: the rest stay open, written at the end */
		keys[n++] = k;
	}
	for (i = 0; i < n; i++) {
		struct open_call *oc = hmap_del(&c->open, keys[i]);
		uint64_t end = now_ns;
		struct proc *p;

		if (!oc)
			continue;
		p = pid ? NULL : hmap_get(&c->procs, oc->ev.pid);
		if (p && p->exit_ns > oc->ev.ts_ns && p->exit_ns < end)
			end = p->exit_ns;	/* it ended with its process */
		open_event(oc, end, &ev);
		c->nopen--;
		open_tid_count(hmap_get(&c->procs, oc->ev.pid), oc->ev.tid, false);
		open_done(c, oc);
		collector_emit(c, &ev);
	}
	free(keys);
}

unsigned collector_open_calls(struct collector *c, uint64_t now_ns,
			      void (*fn)(void *ctx, const struct gb_event *ev), void *ctx)
{
	struct gb_event ev;
	size_t it = 0;
	unsigned n = 0;
	uint64_t k;
	void *v;

	while (c->nopen && hmap_next(&c->open, &it, &k, &v)) {
		open_event(v, now_ns, &ev);
		if (fn)
			fn(ctx, &ev);
		n++;
	}
	return n;
}

void collector_held(struct collector *c, void (*fn)(void *ctx, const struct gb_event *ev), void *ctx)
{
	if (c->join)
		cupti_join_held(c->join, fn, ctx);
}

bool collector_stuck_call(struct collector *c, uint64_t now_ns, uint64_t min_ns,
			  struct gb_event *out)
{
	struct open_call *best = NULL;
	size_t it = 0;
	uint64_t k;
	void *v;

	while (c->nopen && hmap_next(&c->open, &it, &k, &v)) {
		struct open_call *oc = v;

		if (!oc->stuck_seen && now_ns > oc->ev.ts_ns + min_ns &&
		    (!best || oc->ev.ts_ns < best->ev.ts_ns))
			best = oc;
	}
	if (!best)
		return false;
	best->stuck_seen = true;
	open_event(best, now_ns, out);
	return true;
}

static int handle_call(struct collector *c, const struct gb_rec *r, const char *name_str,
		       const uint64_t *ips, unsigned nips)
{
	struct nccl_held held = { 0 };
	struct gb_event ev;
	bool have_held = false;
	struct proc *p;
	unsigned cat;

	if (gb_event_from_rec(&ev, r)) {
		c->st.bad++;
		return 0;
	}
	p = get_proc(c, (pid_t)r->pid);
	if (!p)
		return -ENOMEM;
	if (!p->has_events) {
		p->has_events = true;
		c->st.procs_seen++;
		read_container(c, p);
		read_rank(p);
		if (c->ops.seen)
			c->ops.seen(c->ops.ctx, (pid_t)r->pid, strcmp(p->container, "-") ? p->container : NULL,
				    p->rank && *p->rank ? p->rank : NULL);
	}
	p->ns_pid = r->ns_pid;
	/* an unnested entry while the thread has calls open (--lean launches carry no nesting) */
	if (p->nopen && !(r->flags & (GB_RF_END | GB_RF_NESTED | GB_RF_REGS)) &&
	    hmap_get(&p->open_tids, r->tid))
		close_ended(c, p, r);
	ev.comm = thread_comm(c, p, r);
	if (r->flags & GB_RF_END) {
		/* the entry had the stack; a call whose entry we never read has none */
		struct open_call *oc = hmap_del(&c->open, open_key(r->tid, r->ts_ns));

		if (oc) {
			c->nopen--;
			open_tid_count(p, oc->ev.tid, false);
			ev.stack_id = oc->ev.stack_id;
			held.id = oc->ev.aux[1];
			held.rank_nranks = oc->ev.ptr;
			held.seq = oc->ev.src;
			have_held = true;
			open_done(c, oc);
		}
	} else {
		ev.stack_id = event_stack(c, p, r, ips, nips);
	}
	mark_lean_nested(p, r, &ev);
	if (ev.api == GB_API_NCCL)
		nccl_stamp(&p->nccl, &ev, have_held ? &held : NULL);
	if (ev.type == GB_T_ncclCommInitAll)
		nccl_init_all(&p->nccl, &ev, (const uint64_t *)r->x, 4);
	cat = gb_event_cat(&ev);
	if (cat == GB_CAT_DESC) {
		libops_desc(&p->libops, &ev, r);
	} else if (cat == GB_CAT_OP) {
		libops_stamp(&p->libops, &ev, r);
		if (gb_type_info(ev.type)->detail == GB_OP_JIT_COMPILE) {
			/* nvrtcCreateProgram's name; the options read at return */
			ev.name = hmap_get(&p->names, name_key(p, ev.handle, ev.ts_ns));
			if (name_str)
				ev.detail = intern_str(c->strs, name_str);
		}
	}
	if (cat == GB_CAT_LAUNCH) {
		ev.name = kernel_name(c, p, &ev);
	} else if (cat == GB_CAT_NAME) {
		if (name_str && gb_type_info(ev.type)->shape == GB_SH_REGFUNC) {
			/* the mangled device function: named as the host stub's symbol would be */
			char *dem = gb_demangle(name_str);

			ev.name = intern_str(c->strs, dem ? dem : name_str);
			free(dem);
		} else if (name_str) {
			ev.name = intern_str(c->strs, name_str);
		} else if (ev.type == GB_T_cuKernelGetFunction) {
			/* a CUfunction made from a named CUkernel */
			ev.name = hmap_get(&p->names, name_key(p, ev.arg, ev.ts_ns));
		}
		if (ev.name && ev.handle && ev.ret == 0)
			hmap_put(&p->names, name_key(p, ev.handle, ev.ts_ns), (void *)ev.name);
	}
	if (p->graphs || graphs_type(ev.type)) {
		int kept = graphs_stamp(&p->graphs, &ev, c->strs, emit_cb, c);

		if (kept)
			return kept < 0 ? kept : 0;
	}
	if (r->flags & GB_RF_OPEN)
		return hold_open(c, p, &ev);
	return collector_emit(c, &ev);
}

/* --- one decoder per record kind --- */

/* --lean: a launch from registers alone, as the call record it stands for */
static int rec_lean(struct collector *c, const void *data, size_t size)
{
	const struct gb_lean_rec *l = data;
	struct gb_rec r = {
		.ts_ns = l->ts_ns, .pid = l->pid, .tid = l->tid, .ns_pid = l->ns_pid,
		.ns_tid = l->ns_tid, .kind = GB_REC_CALL, .type = l->type, .flags = GB_RF_REGS,
		.a = { l->a0, l->lo[0] | (uint64_t)l->a1_hi << 32, l->lo[1],
		       l->lo[2] | (uint64_t)l->a3_hi << 32, l->lo[3], l->lo[4] },
	};

	(void)size;
	return handle_call(c, &r, NULL, NULL, 0);
}

static int rec_call(struct collector *c, const void *data, size_t size)
{
	unsigned nips;
	const uint64_t *ips = rec_ips(data, size, sizeof(struct gb_rec), &nips);

	return handle_call(c, data, NULL, ips, nips);
}

/*
 * A name the record holds cut (C++ template kernels run to kilobytes; the
 * BPF side reads GB_NAME_MAX - 1 bytes): the whole string from the process,
 * still at the address the call was given (a module's string table), when
 * it starts as the record's does; else the cut one, counted (names.cut)
 */
static const char *name_whole(struct collector *c, const struct gb_name_rec *nr, const char *cut)
{
	static char buf[PROCMAPS_STR_MAX];

	if (!procmaps_is_cut(cut, GB_NAME_MAX - 1))
		return cut;
	if (procmaps_whole_str((pid_t)nr->r.pid, nr->r.a[2], cut, GB_NAME_MAX - 1, buf, sizeof(buf)))
		return buf;
	c->st.names_cut++;
	return cut;
}

static int rec_name(struct collector *c, const void *data, size_t size)
{
	const struct gb_name_rec *nr = data;
	char name[GB_NAME_MAX + 1];
	unsigned nips;
	const uint64_t *ips = rec_ips(data, size, sizeof(*nr), &nips);

	memcpy(name, nr->name, GB_NAME_MAX);
	name[GB_NAME_MAX] = 0;
	if (nr->r.type < GB_T__COUNT && gb_type_info(nr->r.type)->shape == GB_SH_JIT_OPTS)
		return handle_call(c, data, libops_jit_opts(nr->name, name), ips, nips);
	return handle_call(c, data, name[0] ? name_whole(c, nr, name) : NULL, ips, nips);
}

/*
 * GB_RF_XSTACK (x86-64): the BPF side left the call's stack arguments, the
 * words above the return address, to the stack copy the record rides in
 * (data[8..]); where the copy is shorter (an unreadable stack) they are
 * missing, as a failed read would have left them (GB_RF_XFAULT).
 */
static void stack_words_to_x(struct gb_rec *r, const void *data, size_t size)
{
	const struct gb_stack_rec *s = data;
	unsigned n = r->type < GB_T__COUNT ? gb_shape_stack_words(gb_type_info(r->type)->shape) : 0;
	size_t have = 0;

	r->flags &= ~GB_RF_XSTACK;
	if (!n)
		return;
	if (size >= GB_STACK_REC_HDR)
		have = size - GB_STACK_REC_HDR < s->len ? size - GB_STACK_REC_HDR : s->len;
	if (have < 8 * (n + 1)) {
		r->flags |= GB_RF_XFAULT;
		return;
	}
	memcpy(r->x, s->data + 8, 8 * n);
}

static int rec_stack(struct collector *c, const void *data, size_t size)
{
	const struct gb_rec *r = data;
	struct proc *p = get_proc(c, (pid_t)r->pid);

	if (c->stk && p)
		stack_dwarf_rec(c->stk, proc_maps(c, p, r->ts_ns), data, size);
	/* the call's own record rode along (GB_RF_CALL): its stack is pending now */
	if (!(r->flags & GB_RF_CALL))
		return 0;
	if (r->flags & GB_RF_XSTACK) {
		struct gb_rec call = *r;

		stack_words_to_x(&call, data, size);
		return handle_call(c, &call, NULL, NULL, 0);
	}
	return handle_call(c, data, NULL, NULL, 0);
}

static int rec_pystack(struct collector *c, const void *data, size_t size)
{
	if (c->stk)
		stack_py_rec(c->stk, data, size);
	return 0;
}

static int rec_dlopen(struct collector *c, const void *data, size_t size)
{
	const struct gb_rec *r = data;

	collector_snapshot_maps(c, (pid_t)r->pid);
	if (c->ops.rescan)
		c->ops.rescan(c->ops.ctx, (pid_t)r->pid);
	return 0;
}

static int rec_exec(struct collector *c, const void *data, size_t size)
{
	const struct gb_rec *r = data;

	if (c->ops.rescan)
		c->ops.rescan(c->ops.ctx, (pid_t)r->pid);
	return 0;
}

static int rec_exit(struct collector *c, const void *data, size_t size)
{
	const struct gb_rec *r = data;
	struct proc *p = hmap_get(&c->procs, r->pid);

	if (p) {
		proc_exited(c, p, r->ts_ns);
		p->exit_sig = r->ret > 0 ? r->ret : 0;
		p->exit_comm = thread_comm(c, p, r);
	}
	/* the ring is in order: nothing more will come from its calls */
	close_open(c, (pid_t)r->pid, r->ts_ns);
	if (r->ret > 0 && p && p->has_events && c->ops.crash)
		c->ops.crash(c->ops.ctx, (pid_t)r->pid, r->ret, thread_comm(c, p, r), r->ts_ns);
	return 0;
}

/* CUPTI launches, activity, NVTX edges, CUPTI's own losses: into the join */
static int rec_cupti(struct collector *c, const void *data, size_t size)
{
	if (!c->join) {
		c->st.bad++;
		return 0;
	}
	if (cupti_join_rec(c->join, data, size))
		c->st.bad++;
	return 0;
}

static int rec_ioctl(struct collector *c, const void *data, size_t size)
{
	struct gb_event ev;

	if (!c->ioctl || ioctl_decoder_event(c->ioctl, data, size, c->strs, &ev)) {
		c->st.bad++;
		return 0;
	}
	return collector_emit(c, &ev);
}

static const struct rec_kind {
	size_t min;		/* shortest valid record */
	int (*decode)(struct collector *c, const void *data, size_t size);
} rec_kinds[] = {
	[GB_REC_CALL]		= { sizeof(struct gb_rec), rec_call },
	[GB_REC_NAME]		= { sizeof(struct gb_name_rec), rec_name },
	[GB_REC_EXEC]		= { sizeof(struct gb_rec), rec_exec },
	[GB_REC_DLOPEN]		= { sizeof(struct gb_rec), rec_dlopen },
	[GB_REC_EXIT]		= { sizeof(struct gb_rec), rec_exit },
	[GB_REC_STACK]		= { sizeof(struct gb_rec), rec_stack },
	[GB_REC_PYSTACK]	= { sizeof(struct gb_rec), rec_pystack },
	[GB_REC_LEAN]		= { sizeof(struct gb_lean_rec), rec_lean },
	[GB_REC_CUPTI_LAUNCH]	= { sizeof(struct gb_rec), rec_cupti },
	[GB_REC_CUPTI_ACT]	= { sizeof(struct gb_rec), rec_cupti },
	[GB_REC_NVTX]		= { sizeof(struct gb_rec), rec_cupti },
	[GB_REC_CUPTI_LOST]	= { sizeof(struct gb_rec), rec_cupti },
	[GB_REC_IOCTL]		= { sizeof(struct gb_rec), rec_ioctl },
};

int collector_handle(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct gb_rec *r = data;
	const struct rec_kind *k;

	_Static_assert(offsetof(struct gb_lean_rec, kind) == offsetof(struct gb_rec, kind),
		       "record kinds are told apart at one offset");
	_Static_assert(sizeof(struct gb_lean_rec) == 64, "a --lean launch is 64 bytes");
	c->st.records++;
	if (size < sizeof(struct gb_lean_rec) || r->kind >= sizeof(rec_kinds) / sizeof(rec_kinds[0])) {
		c->st.bad++;
		return 0;
	}
	k = &rec_kinds[r->kind];
	if (!k->decode || size < k->min) {
		c->st.bad++;
		return 0;
	}
	if (r->ts_ns > c->last_ts)
		c->last_ts = r->ts_ns;
	/* made after the process events we have read: take those first (an exec, a rename) */
	if (c->sb_read_ns && r->ts_ns > c->sb_read_ns && c->ops.sync)
		c->ops.sync(c->ops.ctx);
	return k->decode(c, data, size);
}

/* the end of a process that made traced calls, as an event (reports: what it left allocated) */
static void say_exit(struct collector *c, struct proc *p)
{
	struct gb_event ev = { .ts_ns = p->exit_ns, .pid = (uint32_t)p->pid, .tid = (uint32_t)p->pid,
			       .type = GB_T_process_exit, .api = GB_API_GPUBPF, .flags = GB_EF_INSTANT };

	if (!p->has_events || !p->exit_ns || p->exit_said)
		return;
	p->exit_said = true;
	ev.ns_pid = ev.ns_tid = p->ns_pid ? p->ns_pid : (uint32_t)p->pid;
	ev.comm = p->exit_comm ? p->exit_comm : hmap_get(&p->comms, (uint64_t)p->pid);
	if (ev.comm && !ev.comm[0])
		ev.comm = NULL;
	if (p->exit_sig) {
		ev.ret = p->exit_sig;
		ev.flags |= GB_EF_RET;
	}
	collector_emit(c, &ev);
}

static void drop_proc(struct collector *c, struct proc *p)
{
	proc_gone(c, p, p->exit_ns);
	hmap_del(&c->procs, (uint64_t)p->pid);
	if (c->last == p)
		c->last = NULL;
	free(p);
	c->st.procs_live--;
}

/*
 * now_ns: everything written before it has been read. A process that
 * never made a traced call has nothing more to come once read past its
 * exit; one that did keeps grace_ns for what joins its events later
 * (stack copies, device activity).
 */
void collector_reap(struct collector *c, uint64_t now_ns, uint64_t grace_ns)
{
	unsigned i, j = 0;
	size_t it = 0;
	uint64_t k, next = UINT64_MAX;
	void *v;

	/* called every pass of the loop: the list is walked only when one may go */
	for (i = 0; now_ns >= c->reap_at && i < c->nexited; i++) {
		struct proc *p = hmap_get(&c->procs, (uint64_t)c->exited[i]);
		uint64_t at;

		if (!p || !p->exit_ns)
			continue;	/* gone already, or the pid was reused */
		at = p->exit_ns + (p->has_events ? grace_ns : 0);
		if (now_ns > at) {
			drop_proc(c, p);
		} else {
			c->exited[j++] = c->exited[i];
			next = at < next ? at : next;
		}
	}
	if (now_ns >= c->reap_at) {
		c->nexited = j;
		c->reap_at = next == UINT64_MAX ? UINT64_MAX : next + 1;
	}
	if (now_ns - c->last_prune < 1000000000ull)
		return;
	c->last_prune = now_ns;
	/* mappings replaced long before anything still to be read */
	while (now_ns > grace_ns && hmap_next(&c->procs, &it, &k, &v))
		if (((struct proc *)v)->maps.nold)
			procmaps_prune(&((struct proc *)v)->maps, now_ns - grace_ns, 1024);
	/*
	 * A stack copy waits for its call record, which follows it in the ring
	 * (at the call's return). Judged by record time, not the clock: a
	 * consumer seconds behind its producers must not expire what it has
	 * not read yet, and a long copy or allocation keeps its stack.
	 */
	if (c->stk && c->last_ts > GB_STACK_PENDING_NS)
		stack_expire(c->stk, c->last_ts, GB_STACK_PENDING_NS);
}

const struct collector_stats *collector_stats(const struct collector *c)
{
	return &c->st;
}

struct intern *collector_strings(struct collector *c)
{
	return c->strs;
}

void collector_free(struct collector *c)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	if (!c)
		return;
	while (hmap_next(&c->procs, &i, &k, &v))
		free_proc(v);
	hmap_free(&c->procs);
	free(c->exited);
	i = 0;
	while (hmap_next(&c->elfs, &i, &k, &v)) {
		struct elf_entry *e = v;

		elf_syms_close(e->syms);
		free(e);
	}
	hmap_free(&c->elfs);
	hmap_free(&c->pidns);
	i = 0;
	while (hmap_next(&c->open, &i, &k, &v))
		free(v);
	hmap_free(&c->open);
	while (c->spare) {
		struct open_call *oc = c->spare;

		c->spare = oc->next;
		free(oc);
	}
	stack_table_free(c->stk);
	intern_free(c->strs);
	free(c);
}
