/* einsum.c -- einsum equation parsing and letter sizes (einsum.h). */
#include <string.h>
#include "core/einsum.h"
#include "core/status.h"
#include "core/dims.h"

static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int letter_id(trtl_einsum_eq *e, char c)
{
    for (int32_t i = 0; i < e->n_letters; i++)
        if (e->letter[i] == c)
            return i;
    e->letter[e->n_letters] = c;
    return e->n_letters++;
}

trtl_status trtl_einsum_parse(const char *layer, const char *eq, int32_t n_in, trtl_einsum_eq *out)
{
    trtl_einsum_eq e;
    memset(&e, 0, sizeof e);
    if (n_in < 1 || n_in > TRTL_EINSUM_MAX_INPUTS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': einsum takes 1 to %d inputs, got %d", layer,
                          TRTL_EINSUM_MAX_INPUTS, (int)n_in);
    const char *arrow = strstr(eq, "->");
    int32_t term = 0;
    const char *p = eq;
    for (; *p && p != arrow; p++) {
        char c = *p;
        if (c == ' ')
            continue;
        if (c == ',') {
            if (++term >= n_in)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s' has more terms than the %d inputs",
                                  layer, eq, (int)n_in);
            continue;
        }
        if (c == '.')
            return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': equation '%s': ellipsis ('...') is not supported "
                              "(as in TensorRT)", layer, eq);
        if (!is_letter(c))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': character '%c' is not a letter",
                              layer, eq, c);
        if (e.in_rank[term] >= TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': term %d has more than %d letters",
                              layer, eq, (int)term, TRTL_MAX_DIMS);
        e.in_lab[term][e.in_rank[term]++] = (int8_t)letter_id(&e, c);
    }
    if (term + 1 != n_in)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s' has %d terms for %d inputs", layer, eq,
                          (int)term + 1, (int)n_in);
    int32_t count[TRTL_EINSUM_MAX_LETTERS] = {0};
    for (int32_t t = 0; t < n_in; t++)
        for (int32_t i = 0; i < e.in_rank[t]; i++)
            count[e.in_lab[t][i]]++;
    if (arrow) {
        uint64_t seen = 0;
        for (p = arrow + 2; *p; p++) {
            char c = *p;
            if (c == ' ')
                continue;
            if (!is_letter(c))
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': output character '%c' is not a "
                                  "letter", layer, eq, c);
            int id = -1;
            for (int32_t i = 0; i < e.n_letters; i++)
                if (e.letter[i] == c)
                    id = i;
            if (id < 0)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': output letter '%c' is in no "
                                  "input", layer, eq, c);
            if (seen & (1ull << id))
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': output letter '%c' repeats",
                                  layer, eq, c);
            if (e.out_rank >= TRTL_MAX_DIMS)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': more than %d output letters",
                                  layer, eq, TRTL_MAX_DIMS);
            seen |= 1ull << id;
            e.out_lab[e.out_rank++] = (int8_t)id;
        }
    } else {
        for (int c = 'A'; c <= 'z'; c++)
            for (int32_t i = 0; i < e.n_letters; i++)
                if (e.letter[i] == (char)c && count[i] == 1) {
                    if (e.out_rank >= TRTL_MAX_DIMS)
                        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation '%s': more than %d output "
                                          "letters", layer, eq, TRTL_MAX_DIMS);
                    e.out_lab[e.out_rank++] = (int8_t)i;
                }
    }
    e.n_in = n_in;
    *out = e;
    return TRTL_OK;
}

trtl_status trtl_einsum_sizes(const char *layer, const trtl_einsum_eq *e, const trtl_dims *in, int64_t *size)
{
    char s[TRTL_DIMS_STR_MAX];
    for (int32_t i = 0; i < e->n_letters; i++)
        size[i] = -2; /* unseen */
    for (int32_t t = 0; t < e->n_in; t++) {
        if (in[t].nb_dims != e->in_rank[t])
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d %s has %d dims, its equation term %d letters", layer,
                              (int)t, trtl_dims_str(&in[t], s, sizeof s), (int)in[t].nb_dims, (int)e->in_rank[t]);
        for (int32_t i = 0; i < e->in_rank[t]; i++) {
            int64_t d = in[t].d[i], *z = &size[e->in_lab[t][i]];
            if (*z == -2 || *z == -1 || *z == 1)
                *z = (*z == -1 && d == 1) ? -1 : (d == -1 && *z >= 0 && *z != 1 ? *z : d);
            else if (d != *z && d != 1 && d != -1)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': letter '%c' has size %lld and %lld (input %d %s)", layer,
                                  e->letter[e->in_lab[t][i]], (long long)*z, (long long)d, (int)t,
                                  trtl_dims_str(&in[t], s, sizeof s));
        }
    }
    return TRTL_OK;
}
