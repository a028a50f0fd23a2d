// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind.c - DWARF unwinding of a copied user stack after the fact, the
 * way `perf record --call-graph dwarf` does it: libunwind's remote
 * interface with our own accessors. Registers come from the record, stack
 * memory from its copy, everything else (.eh_frame_hdr, .eh_frame) from
 * the mapped files, which stack_mod.c opened while the process lived.
 */
#include <stdlib.h>
#include <string.h>
#include "stack_int.h"

#if defined(__x86_64__)
#include <libunwind.h>

/* libunwind exports it but does not declare it */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi, int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

struct unw_arg {
	struct stack_table *t;
	const struct gb_maps *m;
	const struct gb_stack_rec *s;
	size_t len;		/* bytes of s->data present */
	pid_t pid;
	const struct gb_map *hint;	/* the code mapping whose unwind table is being read */
	struct unw_trace *tr;	/* what this unwind reads, for the memo; NULL: not kept */
};

/* libunwind register number -> index in x86-64 struct pt_regs */
static const int pt_index[] = {
	[UNW_X86_64_RAX] = 10, [UNW_X86_64_RDX] = 12, [UNW_X86_64_RCX] = 11,
	[UNW_X86_64_RBX] = 5, [UNW_X86_64_RSI] = 13, [UNW_X86_64_RDI] = 14,
	[UNW_X86_64_RBP] = 4, [UNW_X86_64_RSP] = 19, [UNW_X86_64_R8] = 9,
	[UNW_X86_64_R9] = 8, [UNW_X86_64_R10] = 7, [UNW_X86_64_R11] = 6,
	[UNW_X86_64_R12] = 3, [UNW_X86_64_R13] = 2, [UNW_X86_64_R14] = 1,
	[UNW_X86_64_R15] = 0, [UNW_X86_64_RIP] = 16,
};

/* runtime address of a file offset of the same file as map, through any of its mappings */
static int off_to_addr(const struct gb_maps *m, const struct gb_map *like, uint64_t off, uint64_t *addr)
{
	unsigned i;

	for (i = 0; i < m->n; i++) {
		const struct gb_map *x = &m->v[i];

		if (x->inode != like->inode || x->dev_major != like->dev_major ||
		    x->dev_minor != like->dev_minor || off < x->offset ||
		    off >= x->offset + (x->end - x->start))
			continue;
		*addr = x->start + (off - x->offset);
		return 0;
	}
	return -1;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unw_arg *a = arg;
	const struct gb_map *map = procmaps_find(a->m, ip);
	unw_dyn_info_t di;
	struct stk_mod *mod;
	uint64_t hdr, table;

	if (!map || !map->path || !(mod = stk_mod_get(a->t, a->pid, map)) || !mod->ehf)
		return -UNW_ENOINFO;
	a->hint = map;
	/* through a mapping of that part of the file, else its segments (the
	 * kernel's mapping events report code mappings only) */
	if ((off_to_addr(a->m, map, mod->ehf_off, &hdr) &&
	     stk_mod_off_addr(mod, map, mod->ehf_off, &hdr)) ||
	    (off_to_addr(a->m, map, mod->ehf_table_off, &table) &&
	     stk_mod_off_addr(mod, map, mod->ehf_table_off, &table)))
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = map->start;
	di.end_ip = map->end;
	di.u.rti.segbase = hdr;
	di.u.rti.table_data = table;
	di.u.rti.table_len = mod->ehf_count * 8 / sizeof(unw_word_t);
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	struct unw_arg *a = arg;
	const struct gb_map *map;
	struct stk_mod *mod;
	uint64_t off;

	if (write)
		return -UNW_EINVAL;
	/* (no addr + 8: near the top of the address space it would wrap) */
	if (addr >= a->s->sp && a->len >= sizeof(*val) && addr - a->s->sp <= a->len - sizeof(*val)) {
		memcpy(val, a->s->data + (addr - a->s->sp), sizeof(*val));
		if (a->tr)
			unw_trace_stack(a->tr, (uint32_t)(addr - a->s->sp), *val);
		return 0;
	}
	/* the mapped files' bytes are the same for every record under the
	 * same mappings: only where the copy would have answered matters */
	if (a->tr)
		unw_trace_outside(a->tr, addr, a->s->sp);
	/* not the stack: unwind tables and code of a mapped file */
	map = procmaps_find(a->m, addr);
	if (map && map->path && (mod = stk_mod_get(a->t, a->pid, map)) && mod->data) {
		off = addr - map->start + map->offset;
	} else if (!(map = a->hint) || !(mod = stk_mod_get(a->t, a->pid, map)) || !mod->data ||
		   stk_mod_addr_off(mod, map, addr, &off)) {
		/* a part of the file the kernel's code-mapping events do not show */
		return -UNW_EINVAL;
	}
	if (off + sizeof(*val) > mod->size)
		return -UNW_EINVAL;
	memcpy(val, mod->data + off, sizeof(*val));
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	struct unw_arg *a = arg;

	if (write)
		return -UNW_EREADONLYREG;
	if (reg < 0 || reg >= (int)(sizeof(pt_index) / sizeof(pt_index[0])))
		return -UNW_EBADREG;
	*val = a->s->regs[pt_index[reg]];
	if (a->tr)
		unw_trace_reg(a->tr, (unsigned)pt_index[reg], *val);
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

void *unwind_new(void)
{
	unw_addr_space_t as = unw_create_addr_space(&accessors, 0);

	/* no caching: one address space serves every process */
	if (as)
		unw_set_caching_policy(as, UNW_CACHE_NONE);
	return as;
}

void unwind_free(void *u)
{
	if (u)
		unw_destroy_addr_space(u);
}

uint64_t unwind_rec_ip(const struct gb_stack_rec *s)
{
	return s->regs[pt_index[UNW_X86_64_RIP]];
}

static unsigned unwind_run(struct unw_arg *a, unw_addr_space_t as, uint64_t *ips, unsigned max)
{
	unw_cursor_t c;
	unw_word_t ip, prev_sp = 0, sp;
	unsigned n = 0;

	if (unw_init_remote(&c, as, a) < 0) {
		ips[0] = a->s->regs[pt_index[UNW_X86_64_RIP]];
		return 1;
	}
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		unw_get_reg(&c, UNW_REG_SP, &sp);
		/* a frame that does not move the stack would loop forever */
		if (n && sp == prev_sp && ip == ips[n - 1])
			break;
		prev_sp = sp;
		ips[n++] = ip;
	} while (n < max && unw_step(&c) > 0);
	return n;
}

/*
 * The memo holds when the mappings answer as they do now: a generation
 * names them, and a record from before their latest change (a timeline
 * asked as of then) is unwound afresh.
 */
static bool memo_usable(const struct gb_maps *m)
{
	return m->gen && (!m->at_ns || m->at_ns >= m->changed_ns);
}

unsigned unwind_rec(struct stack_table *t, const struct gb_maps *m, const struct gb_stack_rec *s,
		    size_t size, uint64_t *ips, unsigned max)
{
	struct unw_arg a = { .t = t, .m = m, .s = s, .pid = (pid_t)s->r.pid };
	uint64_t ip = s->regs[pt_index[UNW_X86_64_RIP]];
	struct unw_trace *tr = NULL;
	unsigned n;

	if (!m || !max)
		return 0;
	a.len = s->len;
	if (a.len > size - GB_STACK_REC_HDR)
		a.len = size - GB_STACK_REC_HDR;
	if (t->memo && memo_usable(m)) {
		n = unw_memo_find(t->memo, s, a.len, ip, m->gen, ips, max);
		if (n) {
			t->st.dwarf_memo++;
			return n - 1;
		}
		tr = unw_memo_trace(t->memo);
	}
	a.tr = tr;
	n = unwind_run(&a, t->unw, ips, max);
	/* a result cut short by max would not be the whole unwind */
	if (tr && n < max)
		unw_memo_add(t->memo, s, ip, m->gen, tr, ips, n);
	return n;
}

#else	/* other architectures: the call site only */

uint64_t unwind_rec_ip(const struct gb_stack_rec *s)
{
	return 0;
}

void *unwind_new(void)
{
	return (void *)1;
}

void unwind_free(void *u)
{
}

unsigned unwind_rec(struct stack_table *t, const struct gb_maps *m, const struct gb_stack_rec *s,
		    size_t size, uint64_t *ips, unsigned max)
{
	return 0;
}
#endif
