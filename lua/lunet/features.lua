-- The features a core module reaches without requiring them. The Lua tree has floors (docs/
-- architecture.md): the core (runtime, tasks, errors, http, response, url, codecs) never
-- requires a feature (auth, a named session's store, OpenAPI, ...) and a feature never requires
-- a command; scripts/check-layers refuses a require that goes up, and any require cycle. Where
-- the core must call up (a session made with `auth`, `http.openapi`), it asks this table for the
-- feature by name, and the composition root (prelude.lua, which runs first in every host and in
-- `require "lunet"`) names each feature's loader here. A feature loads when first asked: a
-- plain GET loads none.
local M = {}

local loaders, loaded = {}, {}

--- The composition root: `name` is loaded by `loader()` when first asked for.
function M.provide(name, loader)
  loaders[name] = loader
end

--- The feature `name`, loaded on first use.
function M.get(name)
  local module = loaded[name]
  if module then return module end
  local loader = loaders[name]
  if not loader then error("lunet: the feature '" .. tostring(name) .. "' was never provided (prelude.lua names them)", 2) end
  module = loader()
  loaded[name] = module
  return module
end

return M
