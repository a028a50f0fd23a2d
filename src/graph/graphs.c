// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* graphs.c - a process's graph captures, graphs and execs (graphs.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graphs.h"
#include "core/vec.h"

#define MAX_HELD	4096	/* launches held per capture: past it they go out unstamped */
#define MAX_NAMES	65536	/* bytes of node names kept per graph */

enum role {
	R_NONE = 0,
	R_BEGIN,	/* cuStreamBeginCapture* */
	R_END,		/* cuStreamEndCapture*: the graph, read at return */
	R_INST,		/* cuGraphInstantiate*: the exec, read at return */
	R_UPDATE,	/* cuGraphExecUpdate*: exec a0 takes graph a1 */
	R_DESTROY,	/* cuGraphDestroy */
	R_XDESTROY,	/* cuGraphExecDestroy */
	R_GLAUNCH,	/* cuGraphLaunch* */
	R_KERNEL,	/* any other launch */
};

/* what a graph holds: its kernel nodes (as many as its capture took) */
struct nodes {
	uint64_t graph;
	unsigned n;
	const char *names;	/* interned "a; b; c", NULL when none */
};

/* a stream being captured: the launches it took, held until the end */
struct capture {
	struct gb_event *held;
	unsigned nheld, capheld;
	unsigned n;		/* kernel nodes */
	char *names;		/* "a; b; c" so far */
	size_t len, cap;
};

struct gb_graphs {
	struct hmap captures;	/* stream -> struct capture */
	struct hmap graphs;	/* graph -> struct nodes */
	struct hmap execs;	/* exec -> struct nodes (a copy: the graph may go first) */
};

static unsigned char roles[GB_T__COUNT];
static bool roles_made;

static void make_roles(void)
{
	unsigned t;

	for (t = 0; t < GB_T__COUNT; t++) {
		const struct gb_type_info *ti = gb_type_info(t);
		const char *n = ti->name;

		if (strstr(n, "StreamBeginCapture"))
			roles[t] = R_BEGIN;
		else if (strstr(n, "StreamEndCapture"))
			roles[t] = R_END;
		else if (strstr(n, "GraphInstantiate"))
			roles[t] = R_INST;
		else if (strstr(n, "GraphExecUpdate"))
			roles[t] = R_UPDATE;
		else if (strstr(n, "GraphExecDestroy"))
			roles[t] = R_XDESTROY;
		else if (strstr(n, "GraphDestroy"))
			roles[t] = R_DESTROY;
		else if (strstr(n, "GraphLaunch"))
			roles[t] = R_GLAUNCH;
		else if (ti->cat == GB_CAT_LAUNCH)
			roles[t] = R_KERNEL;
	}
	roles_made = true;
}

static unsigned role_of(unsigned type)
{
	if (!roles_made)
		make_roles();
	return type < GB_T__COUNT ? roles[type] : R_NONE;
}

bool graphs_type(unsigned type)
{
	unsigned r = role_of(type);

	return r != R_NONE && r != R_KERNEL;
}

static void free_map(struct hmap *m, bool captures)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(m, &it, &k, &v)) {
		if (captures) {
			struct capture *c = v;

			free(c->held);
			free(c->names);
		}
		free(v);
	}
	hmap_free(m);
}

void graphs_free(struct gb_graphs *g)
{
	if (!g)
		return;
	free_map(&g->captures, true);
	free_map(&g->graphs, false);
	free_map(&g->execs, false);
	free(g);
}

/* one more node name; a list past MAX_NAMES stops growing (the count goes on) */
static int add_names(struct capture *c, const char *name)
{
	size_t n = strlen(name), need = c->len + n + 3;

	if (need > MAX_NAMES)
		return 0;
	if (GB_GROW(c->names, c->cap, need))
		return -ENOMEM;
	if (c->len) {
		memcpy(c->names + c->len, "; ", 2);
		c->len += 2;
	}
	memcpy(c->names + c->len, name, n + 1);
	c->len += n;
	return 0;
}

/* the node list a graph launch adds to a capture (a child graph) */
static int add_list(struct capture *c, const struct nodes *nd)
{
	c->n += nd->n;
	return nd->names ? add_names(c, nd->names) : 0;
}

static int put_nodes(struct hmap *m, uint64_t key, const struct nodes *src)
{
	struct nodes *nd = hmap_get(m, key);

	if (!nd) {
		nd = malloc(sizeof(*nd));
		if (!nd || hmap_put(m, key, nd)) {
			free(nd);
			return -ENOMEM;
		}
	}
	*nd = *src;
	return 0;
}

static void drop_nodes(struct hmap *m, uint64_t key)
{
	free(hmap_del(m, key));
}

/* graph events: graph, node count and names; unknown graph: the graph alone */
static void stamp(struct gb_event *ev, uint64_t graph, const struct nodes *nd)
{
	ev->aux[1] = nd ? nd->graph : graph;
	ev->arg = 0;
	ev->flags &= ~GB_EF_ARG;
	if (nd) {
		ev->arg = nd->n;
		ev->flags |= GB_EF_ARG;
		ev->detail = nd->names;
	}
}

static bool ok(const struct gb_event *ev)
{
	return !(ev->flags & GB_EF_RET) || ev->ret == 0;
}

/* the launches a capture held, stamped with its graph (0: none), to emit */
static void release(struct hmap *captures, uint64_t stream, uint64_t graph, graphs_emit_fn emit, void *ctx)
{
	struct capture *c = hmap_del(captures, stream);
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < c->nheld; i++) {
		c->held[i].aux[1] = graph;
		emit(ctx, &c->held[i]);
	}
	free(c->held);
	free(c->names);
	free(c);
}

void graphs_flush(struct gb_graphs *g, graphs_emit_fn emit, void *ctx)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (g && hmap_next(&g->captures, &it, &k, &v)) {
		release(&g->captures, k, 0, emit, ctx);
		it = 0;		/* deleting moves entries: start over */
	}
}

/* a launch on a capturing stream: kept until the capture ends; 1 if kept */
static int capture_launch(struct gb_graphs *g, struct gb_event *ev, unsigned role)
{
	struct capture *c;
	const struct nodes *nd;
	char hex[32];
	int err = 0;

	if (!(ev->flags & GB_EF_STREAM) || !(c = hmap_get(&g->captures, ev->stream)))
		return 0;
	ev->flags |= GB_EF_CAPTURED;
	if (ok(ev) && gb_event_outermost(ev)) {
		if (role == R_GLAUNCH) {
			nd = hmap_get(&g->execs, ev->handle);
			if (nd)
				err = add_list(c, nd);
		} else {
			if (!ev->name)
				snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)ev->handle);
			c->n++;
			err = add_names(c, ev->name ? ev->name : hex);
		}
	}
	if (err)
		return err;
	if (c->nheld >= MAX_HELD || GB_GROW(c->held, c->capheld, c->nheld + 1))
		return 0;	/* out now, without its graph */
	c->held[c->nheld++] = *ev;
	return 1;
}

static int begin(struct gb_graphs *g, const struct gb_event *ev)
{
	struct capture *c;

	/* the runtime's begin after its driver begin: one capture */
	if (!ok(ev) || hmap_get(&g->captures, ev->stream))
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c || hmap_put(&g->captures, ev->stream, c)) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

static int end(struct gb_graphs *g, struct gb_event *ev, struct intern *strs, graphs_emit_fn emit, void *ctx)
{
	struct capture *c = hmap_get(&g->captures, ev->stream);
	uint64_t graph = ok(ev) ? ev->handle : 0;
	struct nodes nd = { .graph = graph };
	int err = 0;

	if (c && graph) {
		nd.n = c->n;
		nd.names = c->len ? intern_str(strs, c->names) : NULL;
		err = put_nodes(&g->graphs, graph, &nd);
	}
	if (c)
		release(&g->captures, ev->stream, graph, emit, ctx);
	/* the runtime's end after its driver end finds the graph made already */
	stamp(ev, graph, graph ? hmap_get(&g->graphs, graph) : NULL);
	return err;
}

/* instantiate (exec made from graph) or update (exec now runs graph) */
static int exec_of(struct gb_graphs *g, struct gb_event *ev, uint64_t exec, uint64_t graph)
{
	const struct nodes *nd = hmap_get(&g->graphs, graph);

	stamp(ev, graph, nd);
	if (!ok(ev) || !exec)
		return 0;
	if (!nd) {
		drop_nodes(&g->execs, exec);	/* what it held before is no longer known */
		return 0;
	}
	return put_nodes(&g->execs, exec, nd);
}

int graphs_stamp(struct gb_graphs **gp, struct gb_event *ev, struct intern *strs,
		 graphs_emit_fn emit, void *ctx)
{
	unsigned role = role_of(ev->type);
	struct gb_graphs *g = *gp;
	int kept;

	if (role == R_NONE || (role == R_KERNEL && (!g || !g->captures.n)))
		return 0;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		*gp = g;
	}
	if (role == R_KERNEL || role == R_GLAUNCH) {
		kept = g->captures.n ? capture_launch(g, ev, role) : 0;
		if (kept || role == R_KERNEL || (ev->flags & GB_EF_CAPTURED))
			return kept;
		stamp(ev, 0, hmap_get(&g->execs, ev->handle));
		return 0;
	}
	switch (role) {
	case R_BEGIN:
		return begin(g, ev);
	case R_END:
		return end(g, ev, strs, emit, ctx);
	case R_INST:
		/* decoded: handle = the exec written at return, arg = the graph (a[1]);
		 * a failed call may not have written the exec */
		if (!ok(ev))
			ev->handle = 0;
		return exec_of(g, ev, ev->handle, ev->arg);
	case R_UPDATE:
		return exec_of(g, ev, ev->handle, ev->arg);
	case R_DESTROY:
		if (ok(ev))
			drop_nodes(&g->graphs, ev->handle);
		ev->aux[1] = ev->handle;
		return 0;
	case R_XDESTROY:
		if (ok(ev))
			drop_nodes(&g->execs, ev->handle);
		return 0;
	}
	return 0;
}
