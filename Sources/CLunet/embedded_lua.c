// The Lua that ships with the host, embedded at build time so the installed program needs no
// files beside it. Add a line here for each file under lua/ (a test checks that none is missing).
#pragma clang diagnostic ignored "-Wc23-extensions"
#include "CLunet.h"


static const unsigned char src_errors[] = {
#embed "../../lua/lunet/errors.lua"
};
static const unsigned char src_runtime[] = {
#embed "../../lua/lunet/runtime.lua"
};
static const unsigned char src_task[] = {
#embed "../../lua/lunet/task.lua"
};
static const unsigned char src_url[] = {
#embed "../../lua/lunet/url.lua"
};
static const unsigned char src_http[] = {
#embed "../../lua/lunet/http.lua"
};
static const unsigned char src_headers[] = {
#embed "../../lua/lunet/headers.lua"
};
static const unsigned char src_response[] = {
#embed "../../lua/lunet/response.lua"
};
static const unsigned char src_serializers[] = {
#embed "../../lua/lunet/serializers.lua"
};
static const unsigned char src_prelude[] = {
#embed "../../lua/lunet/prelude.lua"
};

#define ENTRY(module, path, var) { module, path, var, sizeof var }

static const lunet_LuaSource sources[] = {
    ENTRY("lunet.errors", "lua/lunet/errors.lua", src_errors),
    ENTRY("lunet.runtime", "lua/lunet/runtime.lua", src_runtime),
    ENTRY("lunet.task", "lua/lunet/task.lua", src_task),
    ENTRY("lunet.url", "lua/lunet/url.lua", src_url),
    ENTRY("lunet.headers", "lua/lunet/headers.lua", src_headers),
    ENTRY("lunet.response", "lua/lunet/response.lua", src_response),
    ENTRY("lunet.serializers", "lua/lunet/serializers.lua", src_serializers),
    ENTRY("lunet.http", "lua/lunet/http.lua", src_http),
    ENTRY("lunet.prelude", "lua/lunet/prelude.lua", src_prelude),
};
const lunet_LuaSource *lunet_lua_source(size_t i) {
    return i < sizeof sources / sizeof sources[0] ? &sources[i] : NULL;
}
