/*
 * web_assets — the console's static pages (cli/console/assets/: HTML, JS, CSS),
 * embedded into converge-web at build time by cli/console/web_embed.cmake so that
 * the binary serves them without any file beside it.
 */
#ifndef WEB_ASSETS_H
#define WEB_ASSETS_H

#include <stddef.h>

typedef struct web_asset {
    const char *path; /* "/app.js": the URL path it is served at */
    const char *content_type;
    const unsigned char *bytes;
    size_t len;
} web_asset_t;

/* Every embedded file, ended by an entry whose path is NULL. */
extern const web_asset_t web_assets[];

#endif
