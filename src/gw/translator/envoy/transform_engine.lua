-- gw's transformation engine (follows transform_runtime.lua, whose table R it extends):
-- the regex machine, extractors, one transformation step on a request or a response,
-- and the entry points Envoy calls. A script is this, then its compiled rules `S`.
local byte, sub, find, concat = string.byte, string.sub, string.find, table.concat

-- Regexes: programs compiled by gw (translator/regex_program.py) run by a Pike machine:
-- every thread advances in lockstep over the bytes, so time is linear in the text.
local BYTE, SPLIT, JMP, SAVE, ASSERT, MATCH = 1, 2, 3, 4, 5, 6
R.regex = { BYTE = BYTE, SPLIT = SPLIT, JMP = JMP, SAVE = SAVE, ASSERT = ASSERT, MATCH = MATCH }

function R.byteset(ranges, negate)
  local set = {}
  for b = 0, 255 do set[b] = negate end
  for k = 1, #ranges, 2 do
    for b = ranges[k], ranges[k + 1] do set[b] = not negate end
  end
  return set
end

local function is_word(b)
  return b ~= nil and ((b >= 48 and b <= 57) or (b >= 65 and b <= 90) or (b >= 97 and b <= 122) or b == 95)
end

local function holds(kind, s, i)
  local n = #s
  if kind == "bot" then return i == 1 end
  if kind == "eot" then return i == n + 1 end
  if kind == "bol" then return i == 1 or byte(s, i - 1) == 10 end
  if kind == "eol" then return i == n + 1 or byte(s, i) == 10 end
  local boundary = is_word(byte(s, i - 1)) ~= is_word(byte(s, i))
  if kind == "wordb" then return boundary end
  return not boundary
end

local function add(prog, list, pc, caps, s, i, mark, gen)
  if mark[pc] == gen then return end
  mark[pc] = gen
  local ins = prog[pc]
  local op = ins[1]
  if op == JMP then
    add(prog, list, ins[2], caps, s, i, mark, gen)
  elseif op == SPLIT then
    add(prog, list, ins[2], caps, s, i, mark, gen)
    add(prog, list, ins[3], caps, s, i, mark, gen)
  elseif op == SAVE then
    -- Captures are a chain {slot, position, rest}: saving allocates one link, no copy.
    add(prog, list, pc + 1, { ins[2], i, caps }, s, i, mark, gen)
  elseif op == ASSERT then
    if holds(ins[2], s, i) then add(prog, list, pc + 1, caps, s, i, mark, gen) end
  else
    local n = list.n + 1
    list.n = n
    list[n] = pc
    list[-n] = caps
  end
end

-- The leftmost-first match of `prog` in `s` from byte `start`: its capture positions
-- (slot 2k and 2k+1 bound group k), or nil. `whole`: it must span all of `s`.
function R.search(prog, s, start, whole)
  local mark, gen = {}, 1
  local current, following = { n = 0 }, { n = 0 }
  local matched
  add(prog, current, 1, false, s, start, mark, gen)
  for i = start, #s + 1 do
    if current.n == 0 and (whole or matched) then break end
    local b = byte(s, i)
    gen = gen + 1
    following.n = 0
    for t = 1, current.n do
      local pc, caps = current[t], current[-t]
      local ins = prog[pc]
      if ins[1] == MATCH then
        if not whole or i == #s + 1 then
          matched = caps
          break
        end
      elseif b ~= nil and ins[2][b] then
        add(prog, following, pc + 1, caps, s, i + 1, mark, gen)
      end
    end
    if not whole and not matched and i <= #s then
      add(prog, following, 1, false, s, i + 1, mark, gen)
    end
    current, following = following, current
  end
  if matched == nil then return nil end
  local caps = {}
  while matched do -- the latest position of each slot wins
    if caps[matched[1]] == nil then caps[matched[1]] = matched[2] end
    matched = matched[3]
  end
  return caps
end

local function group(s, caps, k)
  local from, to = caps[2 * k], caps[2 * k + 1]
  if from == nil or to == nil then return "" end
  return sub(s, from, to - 1)
end

-- Extractors ---------------------------------------------------------------------------

local function replace_all(e, s)
  local out, at = {}, 1
  while at <= #s + 1 do
    local caps = R.search(e.prog, s, at, false)
    if caps == nil then break end
    local from, to = caps[0], caps[1]
    if to == from then -- an empty match: keep one byte and look further
      if from > #s then break end
      out[#out + 1] = sub(s, at, from)
      at = from + 1
    else
      out[#out + 1] = sub(s, at, from - 1)
      for _, part in ipairs(e.replacement) do
        out[#out + 1] = type(part) == "number" and group(s, caps, part) or part
      end
      at = to
    end
  end
  out[#out + 1] = sub(s, at)
  return concat(out)
end

local match = string.match

-- Whether `value` matches a matcher's regex (`lp`: as a Lua pattern, when short enough).
function R.matches(m, value)
  if m.lp and #value <= m.lp_max then return find(value, m.lp) ~= nil end
  return R.search(m.prog, value, 1, true) ~= nil
end

function R.extract(e, source)
  if e.mode == "replace_all" then return replace_all(e, source) end
  if e.lp and e.mode == "extract" and #source <= e.lp_max then
    if e.subgroup == 0 then return find(source, e.lp) and source or "" end
    return (select(e.subgroup, match(source, e.lp))) or ""
  end
  local caps = R.search(e.prog, source, 1, true)
  if e.mode == "extract" then return caps and group(source, caps, e.subgroup) or "" end
  if caps == nil or caps[2 * e.subgroup] == nil then return source end
  return sub(source, 1, caps[2 * e.subgroup] - 1) .. e.replacement[1]
    .. sub(source, caps[2 * e.subgroup + 1])
end

-- Steps ----------------------------------------------------------------------------------

local function first_value(headers, name)
  return headers:getAtIndex(name, 0)
end
R.first_value = first_value

-- A header's first value as the step has it now (nil: absent). Every call into Envoy
-- costs, so each name is asked once per step (`c.seen`, false for absent) and the step's
-- own writes update `c.seen` (nothing else changes the headers while a step runs).
local function read(c, name)
  local value = c.seen[name]
  if value == nil then
    value = first_value(c.headers, name) or false
    c.seen[name] = value
  end
  return value or nil
end

-- header("name") with a literal (lower-cased) name.
function R.hdr(c, name) return read(c, name) or "" end

-- What request headers look like to a response should Envoy have none for the stream.
local NO_HEADERS = { getAtIndex = function() return nil end }

-- request_header("name"): on a request the headers themselves; on a response the
-- stream's request headers as they went upstream (Envoy's `requestHeaders()`, asked for
-- once per response and only by templates that read them).
function R.rqh(c, name)
  if not c.response then return R.hdr(c, name) end
  local rq = c.rq
  if rq == nil then
    rq = c.handle:requestHeaders() or NO_HEADERS
    c.rq = rq
  end
  return first_value(rq, name) or ""
end

local function set_path(root, path, value)
  local node = root
  for k = 1, #path - 1 do
    local next_node = node[path[k]]
    if type(next_node) ~= "table" or getmetatable(next_node) ~= R.OBJECT then
      next_node = R.object()
      node[path[k]] = next_node
    end
    node = next_node
  end
  node[path[#path]] = value
end

local PSEUDO = { [":path"] = true, [":method"] = true, [":status"] = true, [":authority"] = true, [":scheme"] = true }

local function log(handle, what, headers, body)
  local lines = {}
  for k, v in pairs(headers) do lines[#lines + 1] = "'" .. k .. "', '" .. v .. "'" end
  handle:logDebug(what .. " headers: " .. concat(lines, "\n") .. "\nbody: " .. (body or ""))
end

-- A header's rendered value (a line break in it would split the header).
local function rendered(h, c)
  local out = h.template(c)
  if find(out, "[\r\n%z]") then R.fail("the value of header " .. h.name .. " would contain a line break") end
  return out
end

-- Apply `step` to the request (`response` false) or the response of `handle`. `headers`:
-- the header object the caller already holds, if any (one call into Envoy less).
function R.apply(handle, step, headers, logged, response)
  -- The body first: waiting for it ends the life of the header object taken before.
  local buffer, raw
  if step.reads_body and not step.passthrough then
    buffer = handle:body(true)
    raw = buffer:length() > 0 and buffer:getBytes(0, buffer:length()) or ""
    headers = nil
  end
  headers = headers or handle:headers()
  if logged then log(handle, "before transformation", headers, raw) end
  if step.header_body then
    return R.header_body(handle, headers, raw or "", step.add_request_metadata, buffer)
  end
  local data = R.object()
  if step.parse_json and raw and raw ~= "" then
    local ok, parsed = pcall(R.decode, raw)
    if ok then data = parsed elseif not step.ignore_parse_errors then error(parsed, 0) end
  end
  local extractions, seen = {}, {}
  local c = {
    extractions = extractions, headers = headers, seen = seen, raw = raw, handle = handle,
    response = response,
  }
  for _, e in ipairs(step.extractors) do
    local value
    if e.header then
      local source = read(c, e.header)
      value = source == nil and "" or R.extract(e, source)
    else
      value = R.extract(e, raw or "")
    end
    extractions[e.name] = value
    if not step.advanced then
      if getmetatable(data) ~= R.OBJECT then
        if next(data) ~= nil then R.fail("cannot merge extractors into a JSON body that is not an object") end
        data = R.object()
      end
      set_path(data, e.path, value)
    end
  end
  c.data = data
  local new_body
  if step.body == "template" then
    new_body = step.body_template(c)
  elseif step.body == "merge_extractors" then
    new_body = R.encode(data)
  elseif step.body == "merge_json_keys" then
    for _, m in ipairs(step.merged_keys) do
      local out = m.template(c)
      if out ~= "" or m.override_empty then
        local ok, parsed = pcall(R.decode, out)
        set_path(data, m.path, ok and parsed or out)
      end
    end
    new_body = R.encode(data)
  end
  for _, m in ipairs(step.metadata) do
    local out = m.template(c)
    if out ~= "" then
      local value = out
      if m.json then
        local ok, parsed = pcall(R.decode, out)
        if ok then value = parsed end
      end
      handle:streamInfo():dynamicMetadata():set(m.namespace, m.key, value)
    end
  end
  -- A pseudo-header keeps its value when the template renders it unchanged (Envoy would
  -- otherwise choose the route again for a new :path); other headers are set as rendered.
  for _, h in ipairs(step.headers) do
    local name, out = h.name, rendered(h, c)
    if out == "" then
      if not PSEUDO[name] then
        headers:remove(name)
        seen[name] = false
      end
    elseif not PSEUDO[name] or read(c, name) ~= out then
      headers:replace(name, out)
      seen[name] = out
    end
  end
  for _, name in ipairs(step.remove) do
    headers:remove(name)
    seen[name] = false
  end
  for _, h in ipairs(step.append) do
    local out = rendered(h, c)
    if out ~= "" then
      headers:add(h.name, out)
      if seen[h.name] == false then seen[h.name] = out end
    end
  end
  if new_body ~= nil then
    buffer:setBytes(new_body)
    if new_body == "" then headers:remove("content-type") end
  end
  if logged then log(handle, "after transformation", headers, new_body) end
end

local function query_parameters(query)
  local single, multi = R.object(), R.object()
  for pair in query:gmatch("[^&]+") do
    local name, value = pair:match("^([^=]*)=(.*)$")
    name, value = R.unescape(name or pair), R.unescape(value or "")
    if single[name] ~= nil then
      multi[name] = multi[name] or R.array({ single[name] })
      multi[name][#multi[name] + 1] = value
    end
    single[name] = value
  end
  return single, multi
end

function R.unescape(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

function R.header_body(handle, headers, raw, add_metadata, buffer)
  local out = R.object()
  if raw ~= "" then out.body = raw end
  local single, multi = R.object(), R.object()
  for k, v in pairs(headers) do
    if single[k] ~= nil then
      multi[k] = multi[k] or R.array({ single[k] })
      multi[k][#multi[k] + 1] = v
    end
    single[k] = v
  end
  out.headers = single
  local path = headers:get(":path")
  if add_metadata and path ~= nil then
    out.multiValueHeaders = multi
    local bare, query = path:match("^([^?]*)%??(.*)$")
    out.path, out.queryString, out.httpMethod = bare, query, headers:get(":method")
    out.queryStringParameters, out.multiValueQueryStringParameters = query_parameters(query)
  end
  headers:replace("content-type", "application/json")
  buffer = buffer or handle:body(true)
  buffer:setBytes(R.encode(out))
end

-- Rules ----------------------------------------------------------------------------------

local function header_holds(headers, m)
  local value = headers:get(m.name)
  local ok
  if m.value == nil then ok = value ~= nil
  elseif value == nil then ok = false
  elseif m.prog then ok = R.matches(m, value)
  else ok = value == m.value end
  if m.invert then return not ok end
  return ok
end

local function condition_holds(headers, cond)
  local full = headers:get(":path") or ""
  local path = full:match("^[^?]*")
  local subject = cond.case_sensitive and path or path:lower()
  if cond.kind == "prefix" and sub(subject, 1, #cond.path) ~= cond.path then return false end
  if cond.kind == "exact" and subject ~= cond.path then return false end
  if cond.kind == "regex" and not R.matches(cond, path) then return false end
  if cond.methods and not cond.methods[headers:get(":method") or ""] then return false end
  for _, m in ipairs(cond.headers) do if not header_holds(headers, m) then return false end end
  if #cond.query > 0 then
    local params = query_parameters(full:match("%?(.*)$") or "")
    for _, m in ipairs(cond.query) do
      if not header_holds({ get = function(_, name) return params[name] end }, m) then return false end
    end
  end
  return true
end

local function reply_error(handle, err)
  if type(err) ~= "table" or err.gw == nil then error(err, 0) end
  handle:respond({ [":status"] = "400", ["content-type"] = "text/plain" }, "bad request: " .. err.gw)
end

-- Envoy's entry points. The response reads the request headers from Envoy itself
-- (request_header()); all it needs kept from the request is which rule was chosen, and
-- only when that is not known in advance (`S.keeps`): the rule's index, in the stream's
-- dynamic metadata.
function R.on_request(handle, S)
  local headers = handle:headers()
  for index, rule in ipairs(S.request) do
    if rule.condition == nil or condition_holds(headers, rule.condition) then
      if rule.request then
        local ok, err = pcall(R.apply, handle, rule.request, headers, S.log, false)
        if not ok then return reply_error(handle, err) end
      end
      if S.keeps then handle:streamInfo():dynamicMetadata():set(S.state, "request", index) end
      if rule.clear_route_cache then handle:clearRouteCache() end
      return
    end
  end
end

local function chosen_rule(handle, S)
  if not S.keeps then return S.rule end
  local state = handle:streamInfo():dynamicMetadata():get(S.state)
  return state and state.request
end

local function response_step(handle, S, rule)
  local chosen = rule and S.request[rule]
  if chosen and chosen.response then return chosen.response end
  local headers = handle:headers()
  for _, r in ipairs(S.response) do
    local ok = true
    for _, m in ipairs(r.headers) do ok = ok and header_holds(headers, m) end
    if ok then return r.response end
  end
end

function R.on_response(handle, S)
  local step = response_step(handle, S, chosen_rule(handle, S))
  if step == nil then return end
  local ok, err = pcall(R.apply, handle, step, nil, S.log, true)
  if not ok then
    if type(err) ~= "table" or err.gw == nil then error(err, 0) end
    local headers = handle:headers()
    headers:replace(":status", "400")
    headers:remove("content-type")
    handle:body(true):setBytes("bad request: " .. err.gw)
  end
end
