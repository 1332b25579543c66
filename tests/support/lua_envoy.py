"""A stand-in for the Envoy Lua filter's stream handle, to run gw's transformation
scripts in LuaJIT (lupa) without Envoy: headers, the buffered body, dynamic metadata,
`respond`, the route's `filterContext()` and (on a response) the stream's request headers
behave as the Lua filter documents them. A route's rules run as in Envoy: in gw's shared
script, which finds them in the route's filter context. Unit tests use it for speed and for
property tests; the e2e tests run the same scripts in Envoy itself."""

from __future__ import annotations

from typing import Any

import lupa.luajit21 as lupa

from gw.translator.envoy.transform_lua import ID_KEY, RULES_KEY, RouteRules, shared_source

_HANDLE = r"""
local Handle = {}
Handle.__index = Handle

local function new_headers(list)
  local h = { list = list }
  function h:get(name)
    local out = {}
    for _, kv in ipairs(self.list) do if kv[1] == name:lower() then out[#out + 1] = kv[2] end end
    if #out == 0 then return nil end
    return table.concat(out, ",")
  end
  function h:getAtIndex(name, index)
    local n = 0
    for _, kv in ipairs(self.list) do
      if kv[1] == name:lower() then
        if n == index then return kv[2] end
        n = n + 1
      end
    end
    return nil
  end
  function h:remove(name)
    local kept = {}
    for _, kv in ipairs(self.list) do if kv[1] ~= name:lower() then kept[#kept + 1] = kv end end
    self.list = kept
  end
  function h:add(name, value) self.list[#self.list + 1] = { name:lower(), value } end
  function h:replace(name, value)
    for _, kv in ipairs(self.list) do
      if kv[1] == name:lower() then kv[2] = value; self:dedupe(name); return end
    end
    self:add(name, value)
  end
  function h:dedupe(name)
    local seen, kept = false, {}
    for _, kv in ipairs(self.list) do
      if kv[1] ~= name:lower() or not seen then kept[#kept + 1] = kv end
      if kv[1] == name:lower() then seen = true end
    end
    self.list = kept
  end
  setmetatable(h, { __pairs = function(t)
    local i = 0
    return function() i = i + 1; local kv = t.list[i]; if kv then return kv[1], kv[2] end end
  end })
  return h
end

function make_handle(header_list, body, metadata, request, context)
  local self = setmetatable({}, Handle)
  self.context = context
  self.h = new_headers(header_list)
  self.raw = body
  self.meta = metadata or {}
  self.request = request
  self.cleared = false
  return self
end

function Handle:headers() return self.h end
-- The route's `LuaPerRoute.filter_context` (Envoy's is userdata read with `get`).
function Handle:filterContext()
  local context = self.context
  return { get = function(_, key) return context[key] end }
end
-- The response handle's view of the stream's request headers (those of the last request
-- run on this stream), nil on a request.
function Handle:requestHeaders() return self.request and self.request.h end
function Handle:body()
  local handle = self
  return {
    length = function() return #handle.raw end,
    getBytes = function(_, i, n) return handle.raw:sub(i + 1, i + n) end,
    setBytes = function(_, s) handle.raw = s; handle.h:replace("content-length", tostring(#s)) end,
  }
end
function Handle:respond(headers, body) self.responded = { headers = headers, body = body } end
function Handle:clearRouteCache() self.cleared = true end
function Handle:logDebug(message) self.logged = (self.logged or "") .. message end
function Handle:streamInfo()
  local handle = self
  return { dynamicMetadata = function()
    return {
      get = function(_, ns) return handle.meta[ns] end,
      set = function(_, ns, k, v)
        handle.meta[ns] = handle.meta[ns] or {}
        handle.meta[ns][k] = v
      end,
    }
  end }
end

function run(source, phase, handle)
  local env = setmetatable({}, { __index = _G })
  local chunk = assert(loadstring(source))
  setfenv(chunk, env)
  chunk()
  local hook = env["envoy_on_" .. phase] -- Envoy runs no hook a script does not define
  if hook then hook(handle) end
  return handle
end
"""


class LuaEnvoy:
    """Runs a script's `envoy_on_request` / `envoy_on_response` on a fake stream."""

    def __init__(self) -> None:
        self.lua = lupa.LuaRuntime(unpack_returned_tuples=True)
        self.lua.execute(_HANDLE)
        self.metadata = self.lua.table()
        self.request: Any = None

    def run(
        self, rules: RouteRules, phase: str, headers: list[tuple[str, str]], body: str = ""
    ) -> Any:
        """One phase of the stream on a route with `rules`, in the shared script Envoy
        would run them in; a response sees the headers the request left."""
        pairs = self.lua.table(*(self.lua.table(k.lower(), v) for k, v in headers))
        request = self.request if phase == "response" else None
        context = self.lua.table_from({ID_KEY: rules.digest, RULES_KEY: rules.source})
        handle = self.lua.globals().make_handle(pairs, body, self.metadata, request, context)
        source = shared_source(rules.on_request, rules.on_response)
        handle = self.lua.globals().run(source, phase, handle)
        if phase == "request":
            self.request = handle
        return handle

    def run_script(
        self, source: str, phase: str, headers: list[tuple[str, str]], body: str = ""
    ) -> Any:
        """One phase of the stream on a route whose config carries the whole `source`
        (`transform_lua.standalone_source`, the routes of TLS virtual hosts)."""
        pairs = self.lua.table(*(self.lua.table(k.lower(), v) for k, v in headers))
        request = self.request if phase == "response" else None
        context = self.lua.table()
        handle = self.lua.globals().make_handle(pairs, body, self.metadata, request, context)
        handle = self.lua.globals().run(source, phase, handle)
        if phase == "request":
            self.request = handle
        return handle

    @staticmethod
    def headers(handle: Any) -> list[tuple[str, str]]:
        return [(kv[1], kv[2]) for kv in handle.h.list.values()]
