// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nvtx.c - the NVTX injection entry point (NVTX_INJECTION64_PATH): NVTX's
 * header-only loader hands us its function table, we fill the core and
 * domain slots with functions that fire probe "nvtx". Names are passed
 * as pointers; wide strings are converted into a per-thread buffer that
 * lives until the probe has fired.
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include "emit.h"

#define GB_EXPORT __attribute__((visibility("default")))

static __thread char wbuf[GB_NAME_MAX];
static __thread int depth;
static uint64_t next_range_id = 1;

/* UTF-32 (Linux wchar_t) to UTF-8, truncated to the record's name size */
static const char *narrow(const wchar_t *w)
{
	size_t n = 0;
	uint32_t c;

	if (!w)
		return NULL;
	for (; *w && n + 4 < sizeof(wbuf); w++) {
		c = (uint32_t)*w;
		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		if (c < 0x80) {
			wbuf[n++] = (char)c;
		} else if (c < 0x800) {
			wbuf[n++] = (char)(0xc0 | c >> 6);
			wbuf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			wbuf[n++] = (char)(0xe0 | c >> 12);
			wbuf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			wbuf[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			wbuf[n++] = (char)(0xf0 | c >> 18);
			wbuf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			wbuf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			wbuf[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	wbuf[n] = 0;
	return wbuf;
}

/* Registered strings are our own copies: the handle is the UTF-8 text */
static const char *attr_name(const nvtxEventAttributes_t *a)
{
	if (!a)
		return NULL;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return a->message.ascii;
	case NVTX_MESSAGE_TYPE_UNICODE:
		return narrow(a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return (const char *)a->message.registered;
	default:
		return NULL;
	}
}

static uint32_t attr_color(const nvtxEventAttributes_t *a)
{
	return a && a->colorType == NVTX_COLOR_ARGB ? a->color : 0;
}

static void emit(uint32_t op, uint64_t id, nvtxDomainHandle_t d, const char *name, uint32_t color)
{
	gb_emit_nvtx(op, id, (uintptr_t)d, name, color);
}

static uint64_t new_range_id(void)
{
	return __atomic_fetch_add(&next_range_id, 1, __ATOMIC_RELAXED);
}

/* --- default domain --- */
static void mark_ex(const nvtxEventAttributes_t *a) { emit(GB_NVTX_MARK, 0, NULL, attr_name(a), attr_color(a)); }
static void mark_a(const char *m) { emit(GB_NVTX_MARK, 0, NULL, m, 0); }
static void mark_w(const wchar_t *m) { emit(GB_NVTX_MARK, 0, NULL, narrow(m), 0); }

static nvtxRangeId_t dom_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range_id();

	emit(GB_NVTX_START, id, d, attr_name(a), attr_color(a));
	return id;
}

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a) { return dom_start_ex(NULL, a); }

static nvtxRangeId_t start_a(const char *m)
{
	uint64_t id = new_range_id();

	emit(GB_NVTX_START, id, NULL, m, 0);
	return id;
}

static nvtxRangeId_t start_w(const wchar_t *m) { return start_a(narrow(m)); }
static void dom_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { emit(GB_NVTX_END, id, d, NULL, 0); }
static void range_end(nvtxRangeId_t id) { dom_end(NULL, id); }

static int dom_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	emit(GB_NVTX_PUSH, 0, d, attr_name(a), attr_color(a));
	return depth++;
}

static int push_ex(const nvtxEventAttributes_t *a) { return dom_push_ex(NULL, a); }

static int push_a(const char *m)
{
	emit(GB_NVTX_PUSH, 0, NULL, m, 0);
	return depth++;
}

static int push_w(const wchar_t *m) { return push_a(narrow(m)); }

static int dom_pop(nvtxDomainHandle_t d)
{
	if (depth <= 0)
		return -1;	/* NVTX's contract: pop without push is an error */
	emit(GB_NVTX_POP, 0, d, NULL, 0);
	return --depth;
}

static int range_pop(void) { return dom_pop(NULL); }
static void dom_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	emit(GB_NVTX_MARK, 0, d, attr_name(a), attr_color(a));
}

/* Domains and registered strings: handles are heap copies of their names */
static nvtxDomainHandle_t dom_create_a(const char *name) { return (nvtxDomainHandle_t)strdup(name ? name : ""); }
static nvtxDomainHandle_t dom_create_w(const wchar_t *name) { return dom_create_a(narrow(name)); }
static void dom_destroy(nvtxDomainHandle_t d) { (void)d; /* a late range may still name it */ }
static nvtxStringHandle_t reg_a(nvtxDomainHandle_t d, const char *s) { return (nvtxStringHandle_t)strdup(s ? s : ""); }
static nvtxStringHandle_t reg_w(nvtxDomainHandle_t d, const wchar_t *s) { return reg_a(d, narrow(s)); }

typedef void (*fnp)(void);

struct slot {
	unsigned id;
	fnp fn;
};

static const struct slot core[] = {
	{ NVTX_CBID_CORE_MarkEx, (fnp)mark_ex }, { NVTX_CBID_CORE_MarkA, (fnp)mark_a },
	{ NVTX_CBID_CORE_MarkW, (fnp)mark_w }, { NVTX_CBID_CORE_RangeStartEx, (fnp)start_ex },
	{ NVTX_CBID_CORE_RangeStartA, (fnp)start_a }, { NVTX_CBID_CORE_RangeStartW, (fnp)start_w },
	{ NVTX_CBID_CORE_RangeEnd, (fnp)range_end }, { NVTX_CBID_CORE_RangePushEx, (fnp)push_ex },
	{ NVTX_CBID_CORE_RangePushA, (fnp)push_a }, { NVTX_CBID_CORE_RangePushW, (fnp)push_w },
	{ NVTX_CBID_CORE_RangePop, (fnp)range_pop },
};

static const struct slot core2[] = {
	{ NVTX_CBID_CORE2_DomainMarkEx, (fnp)dom_mark_ex },
	{ NVTX_CBID_CORE2_DomainRangeStartEx, (fnp)dom_start_ex },
	{ NVTX_CBID_CORE2_DomainRangeEnd, (fnp)dom_end },
	{ NVTX_CBID_CORE2_DomainRangePushEx, (fnp)dom_push_ex },
	{ NVTX_CBID_CORE2_DomainRangePop, (fnp)dom_pop },
	{ NVTX_CBID_CORE2_DomainRegisterStringA, (fnp)reg_a },
	{ NVTX_CBID_CORE2_DomainRegisterStringW, (fnp)reg_w },
	{ NVTX_CBID_CORE2_DomainCreateA, (fnp)dom_create_a },
	{ NVTX_CBID_CORE2_DomainCreateW, (fnp)dom_create_w },
	{ NVTX_CBID_CORE2_DomainDestroy, (fnp)dom_destroy },
};

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule mod,
		const struct slot *s, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	size_t i;

	if (!cb->GetModuleFunctionTable(mod, &table, &size) || !table)
		return -1;
	for (i = 0; i < n; i++)
		if (s[i].id <= size && table[s[i].id])
			*table[s[i].id] = s[i].fn;
	return 0;
}

GB_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;

	if (!get)
		return 0;
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	gb_emit_env_once();
	if (fill(cb, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0])))
		return 0;
	fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0]));
	return 1;
}
