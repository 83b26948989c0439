/* params.c -- naming a plugin layer's plugin in messages (the params themselves are plain data). */
#include <stdio.h>

#include "core/params.h"

const char *trtl_plugin_label(const trtl_plugin_params *p, char *buf, size_t n)
{
    const trtl_plugin_creator *cr = p->plugin ? p->plugin->creator : NULL;
    const char *ns = cr && cr->plugin_namespace ? cr->plugin_namespace : "";
    char named[96] = "";
    if (p->name[0])
        snprintf(named, sizeof named, "'%s' ", p->name);
    if (cr)
        snprintf(buf, n, "plugin %s%s v%s%s%s%s", named, cr->name, cr->version, *ns ? " in namespace '" : "", ns,
                 *ns ? "'" : "");
    else
        snprintf(buf, n, "plugin %swith no registered creator", named);
    return buf;
}
