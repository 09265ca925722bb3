/* hcap_audit.c - libhintcap-audit.so, the rtld-audit (LD_AUDIT) companion of libhintcap.
 *
 * libhintcap (LD_PRELOAD) interposes the exported libibverbs constructors, which reaches
 * every application that links libibverbs: its references bind to the first definition in
 * the global scope, the preloaded one. An application that loads verbs itself (NCCL:
 * dlopen("libibverbs.so[.1]") + dlvsym(handle, "ibv_open_device", "IBVERBS_1.1"); others
 * with dlsym(RTLD_NEXT, ...) from a library) gets libibverbs' own definitions: a lookup on a
 * handle searches that object and its dependencies only, and RTLD_NEXT from a library skips
 * the preloaded objects that precede it. The dynamic loader tells an audit library about
 * every such binding - PLT and BIND_NOW relocations (la_symbind is called for BIND_NOW too
 * since glibc 2.35) of the objects that ask for it, dlsym and dlvsym with any handle - after
 * doing the ordinary lookup, and uses the address la_symbind64 returns. So for the names
 * libhintcap wraps, a binding to the base namespace's libibverbs at its default symbol
 * version, from any object but libhintcap itself, gets libhintcap's wrapper instead;
 * everything else is returned unchanged.
 *
 * An audit library lives in a link-map namespace of its own, so it cannot call libhintcap;
 * it finds the wrappers' addresses in libhintcap's dynamic symbol table (GNU or SysV hash),
 * which the loader has mapped when la_objopen reports it. It keeps no other state, takes no
 * lock and allocates nothing, and it is linked without libc (-nostdlib: the few string
 * helpers are here): a dependency would be loaded again into the audit namespace, by
 * soname, which fails where the loader is not also installed under its soname (minimal
 * images) and costs a second libc in every process.
 */
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#define HCAP_AUDIT_EXPORT __attribute__((visibility("default")))

/* ---- what this library would otherwise take from libc ---- */

static int str_eq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static int str_prefix(const char *s, const char *prefix)
{
    while (*prefix && *s == *prefix)
        s++, prefix++;
    return *prefix == '\0';
}

/* The libibverbs functions libhintcap.so exports (libhintcap.map), in one place. */
static const char *const g_names[] = {"ibv_open_device", "ibv_close_device", "ibv_create_qp",
                                      "ibv_destroy_qp", "ibv_destroy_cq", "ibv_reg_dmabuf_mr"};
#define HCAP_AUDIT_N (sizeof(g_names) / sizeof(g_names[0]))

/* One object's dynamic symbol table, as the loader mapped it. */
typedef struct {
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *gnu_hash;
    const uint32_t *sysv_hash;
    const ElfW(Half) *versym;
} dynsyms_t;

static struct {
    struct link_map *hintcap; /* libhintcap.so in the base namespace */
    struct link_map *verbs;   /* libibverbs.so.1 in the base namespace */
    dynsyms_t verbs_syms;
    uintptr_t wrapper[HCAP_AUDIT_N];
    int resolved;             /* wrapper[] looked up */
} g;

/* A d_ptr of the dynamic section: the loader relocates them in place on most targets. */
static const void *dyn_addr(const struct link_map *m, ElfW(Addr) p)
{
    return (const void *)(p < m->l_addr ? p + m->l_addr : p);
}

static void dynsyms_read(const struct link_map *m, dynsyms_t *d)
{
    const ElfW(Dyn) *dyn;

    d->symtab = NULL;
    d->strtab = NULL;
    d->gnu_hash = d->sysv_hash = NULL;
    d->versym = NULL;
    for (dyn = m->l_ld; dyn && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            d->symtab = dyn_addr(m, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            d->strtab = dyn_addr(m, dyn->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            d->gnu_hash = dyn_addr(m, dyn->d_un.d_ptr);
            break;
        case DT_HASH:
            d->sysv_hash = dyn_addr(m, dyn->d_un.d_ptr);
            break;
        case DT_VERSYM:
            d->versym = dyn_addr(m, dyn->d_un.d_ptr);
            break;
        default:
            break;
        }
    }
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;

    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static int sym_is(const dynsyms_t *d, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &d->symtab[i];

    return s->st_shndx != SHN_UNDEF && s->st_value != 0 && str_eq(d->strtab + s->st_name, name);
}

/* The index of name's definition in d, or 0 (index 0 is the undefined symbol). */
static uint32_t dynsyms_find(const dynsyms_t *d, const char *name)
{
    if (!d->symtab || !d->strtab)
        return 0;
    if (d->gnu_hash) {
        const uint32_t *h = d->gnu_hash, nbuckets = h[0], symoffset = h[1], bloom = h[2];
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom);
        const uint32_t *chain = buckets + nbuckets, hash = gnu_hash(name);
        uint32_t i = nbuckets ? buckets[hash % nbuckets] : 0;

        for (; i >= symoffset && i != 0; i++) {
            uint32_t c = chain[i - symoffset];

            if ((c | 1) == (hash | 1) && sym_is(d, i, name))
                return i;
            if (c & 1)
                break;
        }
        return 0;
    }
    if (d->sysv_hash) {
        uint32_t i, n = d->sysv_hash[1];

        for (i = 1; i < n; i++)
            if (sym_is(d, i, name))
                return i;
    }
    return 0;
}

/* The wrappers' addresses in libhintcap, looked up at the first binding that needs them.
 * Lazy PLT bindings run without the loader's lock, so two threads may both look: each
 * stores the same values, and the flag is published after them. */
static void resolve_wrappers(void)
{
    dynsyms_t d;
    size_t i;

    if (__atomic_load_n(&g.resolved, __ATOMIC_ACQUIRE) || !g.hintcap)
        return;
    dynsyms_read(g.hintcap, &d);
    for (i = 0; i < HCAP_AUDIT_N; i++) {
        uint32_t k = dynsyms_find(&d, g_names[i]);

        __atomic_store_n(&g.wrapper[i], k ? g.hintcap->l_addr + d.symtab[k].st_value : 0,
                         __ATOMIC_RELAXED);
    }
    __atomic_store_n(&g.resolved, 1, __ATOMIC_RELEASE);
}

static const char *base_name(const char *path)
{
    const char *b = path;

    for (; *path; path++)
        if (*path == '/')
            b = path + 1;
    return b;
}

HCAP_AUDIT_EXPORT unsigned int la_version(unsigned int version)
{
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* The loader reports a PLT or BIND_NOW binding to la_symbind64 only when the referencing
 * object asked for LA_FLG_BINDFROM and the defining one for LA_FLG_BINDTO (a dlsym or dlvsym
 * needs either). LD_PRELOAD already wins every binding made in the global scope, but an
 * object loaded with RTLD_DEEPBIND (a communication library's transport plugin linking
 * libibverbs) searches itself and its dependencies first and binds past libhintcap through
 * its PLT: so every object of the base namespace but libhintcap binds "from", and
 * libibverbs "to" as well. la_symbind64 is thus called for each binding of the base
 * namespace to libibverbs and for each dlsym (a compare of the defining object's cookie for
 * the others); the other bindings only cost the loader a test of these flags. */
HCAP_AUDIT_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    const char *name = base_name(map->l_name ? map->l_name : "");

    (void)cookie;
    if (lmid != LM_ID_BASE)
        return 0;
    if (str_prefix(name, "libhintcap.so") && !g.hintcap) {
        g.hintcap = map;
        return 0;
    }
    if (str_prefix(name, "libibverbs.so") && !g.verbs) {
        g.verbs = map;
        dynsyms_read(map, &g.verbs_syms);
        return LA_FLG_BINDTO | LA_FLG_BINDFROM;
    }
    return LA_FLG_BINDFROM;
}

/* Only the default version of a symbol is what libhintcap's wrapper implements (NCCL asks
 * for IBVERBS_1.1, which is the default of each name it wraps; an old IBVERBS_1.0 compat
 * entry keeps its own definition). */
static int default_version(unsigned int ndx)
{
    return !g.verbs_syms.versym || !(g.verbs_syms.versym[ndx] & 0x8000);
}

HCAP_AUDIT_EXPORT uintptr_t la_symbind64(ElfW(Sym) *sym, unsigned int ndx, uintptr_t *refcook,
                                         uintptr_t *defcook, unsigned int *flags,
                                         const char *symname)
{
    uintptr_t w;
    size_t i;

    (void)flags;
    if (!g.hintcap || !g.verbs || *defcook != (uintptr_t)g.verbs ||
        *refcook == (uintptr_t)g.hintcap || !str_prefix(symname, "ibv_"))
        return sym->st_value;
    for (i = 0; i < HCAP_AUDIT_N; i++) {
        if (!str_eq(symname, g_names[i]))
            continue;
        resolve_wrappers();
        w = __atomic_load_n(&g.wrapper[i], __ATOMIC_RELAXED);
        return w && default_version(ndx) ? w : sym->st_value;
    }
    return sym->st_value;
}
