-- gw's transformation runtime: the fixed part of every Lua script gw compiles from
-- transformation templates (translator/envoy/transform_lua.py adds the compiled rules).
-- It holds what Envoy's Lua has not: a JSON decoder and encoder, the template language's
-- values and functions, base64, and a Pike regex machine (RE2's linear-time semantics).
local R = {}
local byte, char, sub, find, format = string.byte, string.char, string.sub, string.find, string.format
local concat, insert, sort = table.concat, table.insert, table.sort
local floor, huge = math.floor, math.huge

R.ARRAY = {}
R.OBJECT = {}
R.NULL = setmetatable({}, { __tostring = function() return "null" end })
local ARRAY, OBJECT, NULL = R.ARRAY, R.OBJECT, R.NULL

local function fail(message) error({ gw = message }, 0) end
R.fail = fail
local function array(t) return setmetatable(t or {}, ARRAY) end
local function object(t) return setmetatable(t or {}, OBJECT) end
R.array, R.object = array, object
local function is_array(v) return type(v) == "table" and getmetatable(v) == ARRAY end
local function is_object(v) return type(v) == "table" and getmetatable(v) == OBJECT end

-- JSON ---------------------------------------------------------------------------------

local escapes = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function utf8(code)
  if code < 0x80 then return char(code) end
  if code < 0x800 then return char(0xC0 + floor(code / 64), 0x80 + code % 64) end
  if code < 0x10000 then
    return char(0xE0 + floor(code / 4096), 0x80 + floor(code / 64) % 64, 0x80 + code % 64)
  end
  return char(0xF0 + floor(code / 262144), 0x80 + floor(code / 4096) % 64,
    0x80 + floor(code / 64) % 64, 0x80 + code % 64)
end

local decode_value

local function skip(s, i)
  local _, e = find(s, "^[ \t\r\n]*", i)
  return e + 1
end

local function decode_string(s, i)
  -- s:sub(i, i) == '"'
  local parts, n = {}, 0
  local at = i + 1
  while true do
    local q = find(s, '["\\%z\1-\31]', at)
    if not q then fail("unterminated string") end
    local ch = sub(s, q, q)
    if q > at then n = n + 1; parts[n] = sub(s, at, q - 1) end
    if ch == '"' then return concat(parts), q + 1 end
    if ch ~= "\\" then fail("control character in string") end
    local e = sub(s, q + 1, q + 1)
    if e == "u" then
      local hex = sub(s, q + 2, q + 5)
      if not find(hex, "^%x%x%x%x$") then fail("invalid \\u escape") end
      local code = tonumber(hex, 16)
      at = q + 6
      if code >= 0xD800 and code <= 0xDBFF then
        local low = sub(s, at, at + 5)
        if not find(low, "^\\u[dD][c-fC-F]%x%x$") then fail("lone surrogate") end
        code = 0x10000 + (code - 0xD800) * 1024 + (tonumber(sub(low, 3), 16) - 0xDC00)
        at = at + 6
      elseif code >= 0xDC00 and code <= 0xDFFF then
        fail("lone surrogate")
      end
      n = n + 1; parts[n] = utf8(code)
    else
      local v = escapes[e]
      if not v then fail("invalid escape") end
      n = n + 1; parts[n] = v
      at = q + 2
    end
  end
end

local function decode_number(s, i)
  local _, e = find(s, "^-?0", i)
  if not e then _, e = find(s, "^-?[1-9]%d*", i) end
  if not e then fail("invalid number") end
  local _, f = find(s, "^%.%d+", e + 1)
  if f then e = f end
  local _, x = find(s, "^[eE][-+]?%d+", e + 1)
  if x then e = x end
  return tonumber(sub(s, i, e)), e + 1
end

decode_value = function(s, i, depth)
  if depth > 512 then fail("nested too deeply") end
  i = skip(s, i)
  local ch = sub(s, i, i)
  if ch == "{" then
    local out = object()
    i = skip(s, i + 1)
    if sub(s, i, i) == "}" then return out, i + 1 end
    while true do
      if sub(s, i, i) ~= '"' then fail("expected a key") end
      local key
      key, i = decode_string(s, i)
      i = skip(s, i)
      if sub(s, i, i) ~= ":" then fail("expected ':'") end
      out[key], i = decode_value(s, i + 1, depth + 1)
      i = skip(s, i)
      ch = sub(s, i, i)
      if ch == "}" then return out, i + 1 end
      if ch ~= "," then fail("expected ',' or '}'") end
      i = skip(s, i + 1)
    end
  elseif ch == "[" then
    local out, n = array(), 0
    i = skip(s, i + 1)
    if sub(s, i, i) == "]" then return out, i + 1 end
    while true do
      n = n + 1
      out[n], i = decode_value(s, i, depth + 1)
      i = skip(s, i)
      ch = sub(s, i, i)
      if ch == "]" then return out, i + 1 end
      if ch ~= "," then fail("expected ',' or ']'") end
      i = i + 1
    end
  elseif ch == '"' then
    return decode_string(s, i)
  elseif ch == "-" or find(ch, "^%d") then
    return decode_number(s, i)
  elseif sub(s, i, i + 3) == "true" then
    return true, i + 4
  elseif sub(s, i, i + 4) == "false" then
    return false, i + 5
  elseif sub(s, i, i + 3) == "null" then
    return NULL, i + 4
  end
  fail("unexpected " .. (ch == "" and "end of input" or format("%q", ch)))
end

function R.decode(s)
  local ok, value, i = pcall(decode_value, s, 1, 0)
  if not ok then
    local message = type(value) == "table" and value.gw or tostring(value)
    fail("the body is not valid JSON: " .. message)
  end
  if skip(s, i) <= #s then fail("the body is not valid JSON: text after the value") end
  return value
end

local function number_text(x)
  if x ~= x or x == huge or x == -huge then return "null" end
  if x == floor(x) and x > -2^53 and x < 2^53 then return format("%d", x) end
  for digits = 15, 17 do
    local text = format("%." .. digits .. "g", x)
    if tonumber(text) == x then return text end
  end
  return format("%.17g", x)
end
R.number_text = number_text

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(ch)
    local b = byte(ch)
    if ch == '"' then return '\\"' elseif ch == "\\" then return "\\\\"
    elseif ch == "\n" then return "\\n" elseif ch == "\r" then return "\\r"
    elseif ch == "\t" then return "\\t" elseif ch == "\b" then return "\\b"
    elseif ch == "\f" then return "\\f" elseif b == 127 then return ch end
    return format("\\u%04x", b)
  end) .. '"'
end

local function encode(v, out)
  local t = type(v)
  if t == "string" then out[#out + 1] = quote(v)
  elseif t == "number" then out[#out + 1] = number_text(v)
  elseif t == "boolean" then out[#out + 1] = v and "true" or "false"
  elseif v == nil or v == NULL then out[#out + 1] = "null"
  elseif is_array(v) then
    out[#out + 1] = "["
    for k = 1, #v do
      if k > 1 then out[#out + 1] = "," end
      encode(v[k], out)
    end
    out[#out + 1] = "]"
  else
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    sort(keys)
    out[#out + 1] = "{"
    for n, k in ipairs(keys) do
      if n > 1 then out[#out + 1] = "," end
      out[#out + 1] = quote(k)
      out[#out + 1] = ":"
      encode(v[k], out)
    end
    out[#out + 1] = "}"
  end
end

function R.encode(v)
  local out = {}
  encode(v, out)
  return concat(out)
end

-- Template values ----------------------------------------------------------------------

-- `{{ value }}`: strings as they are (JSON-escaped without the quotes with
-- escapeCharacters), null as nothing, the rest as JSON.
function R.show(v, escape)
  local t = type(v)
  if t == "string" then
    if escape then local q = quote(v); return sub(q, 2, -2) end
    return v
  end
  if v == nil or v == NULL then return "" end
  return R.encode(v)
end

function R.truthy(v)
  local t = type(v)
  if t == "boolean" then return v end
  if t == "number" then return v ~= 0 end
  if v == nil or v == NULL then return false end
  if t == "string" then return v ~= "" end
  return next(v) ~= nil
end

local function equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" or a == NULL or b == NULL then return false end
  if getmetatable(a) ~= getmetatable(b) then return false end
  for k, v in pairs(a) do if not equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
R.equal = equal

function R.less(a, b)
  if type(a) == type(b) and (type(a) == "number" or type(a) == "string") then return a < b end
  fail("cannot compare " .. R.encode(a) .. " and " .. R.encode(b))
end

function R.contains(item, list)
  if not is_array(list) then fail("'in' needs a list on its right") end
  for _, v in ipairs(list) do if equal(v, item) then return true end end
  return false
end

local function number(v)
  if type(v) ~= "number" then fail("not a number: " .. R.encode(v)) end
  return v
end

function R.arith(op, a, b)
  if op == "+" and type(a) == "string" and type(b) == "string" then return a .. b end
  a, b = number(a), number(b)
  if op == "+" then return a + b elseif op == "-" then return a - b
  elseif op == "*" then return a * b elseif op == "/" then
    if b == 0 then fail("division by zero") end
    return a / b
  elseif op == "%" then
    if b == 0 then fail("division by zero") end
    return math.fmod(a, b)
  end
  return a ^ b
end

-- One key of a variable's path inside `v` (an array index is its decimal text), or nil.
local function key_in(v, key)
  if is_array(v) then
    local index = tonumber(key)
    return index and v[index + 1] or nil
  end
  if type(v) == "table" and v ~= NULL then return v[key] end
  return nil
end

-- A variable: `path` looked up in the template's data. Missing → an error (the request is
-- answered 400), or `missing` when given (for default()).
function R.var(data, path, missing)
  local v = data
  for k = 1, #path do
    v = key_in(v, path[k])
    if v == nil then
      if missing ~= nil then return missing end
      fail("variable '" .. concat(path, ".") .. "' not found")
    end
  end
  return v
end
R.MISSING = {}

-- R.var with a path of one key (most variables): no path table per render.
function R.var1(data, key, missing)
  local v = key_in(data, key)
  if v == nil then
    if missing ~= nil then return missing end
    fail("variable '" .. key .. "' not found")
  end
  return v
end

-- A loop or `set` variable (`value`, named `name`), then `path` inside it.
function R.lvar(value, name, path, missing)
  if value == nil then
    if missing ~= nil then return missing end
    fail("variable '" .. name .. "' not found")
  end
  return R.var(value, path, missing)
end

function R.default(value, fallback)
  if value == R.MISSING then return fallback end
  return value
end

-- Functions ----------------------------------------------------------------------------

local function text(v) if type(v) == "string" then return v end return R.show(v) end
R.text = text

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

local function b64encode(s, alphabet, pad)
  local out, n = {}, 0
  for k = 1, #s, 3 do
    local a, b, c = byte(s, k, k + 2)
    local bits = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = {}
    for j = 1, 4 do
      local index = floor(bits / 2 ^ (6 * (4 - j))) % 64 + 1
      chars[j] = sub(alphabet, index, index)
    end
    if not b then chars[3] = pad and "=" or ""; chars[4] = pad and "=" or ""
    elseif not c then chars[4] = pad and "=" or "" end
    n = n + 1; out[n] = concat(chars)
  end
  return concat(out)
end

local decoders = {}
local function b64decode(s, alphabet)
  local values = decoders[alphabet]
  if values == nil then
    values = {}
    for k = 1, 64 do values[byte(alphabet, k)] = k - 1 end
    decoders[alphabet] = values
  end
  s = s:gsub("=+$", "")
  local out, n, bits, count = {}, 0, 0, 0
  for k = 1, #s do
    local v = values[byte(s, k)]
    if v == nil then return "" end
    bits = bits * 64 + v
    count = count + 1
    if count == 4 then
      n = n + 1; out[n] = char(floor(bits / 65536), floor(bits / 256) % 256, bits % 256)
      bits, count = 0, 0
    end
  end
  if count == 1 then return "" end
  if count == 2 then n = n + 1; out[n] = char(floor(bits / 16)) end
  if count == 3 then n = n + 1; out[n] = char(floor(bits / 1024), floor(bits / 4) % 256) end
  return concat(out)
end

local random_source
local function random_bytes(count)
  if random_source == nil then
    random_source = io and io.open and io.open("/dev/urandom", "rb") or false
  end
  if random_source then
    local got = random_source:read(count)
    if got and #got == count then return got end
  end
  local out = {}
  for k = 1, count do out[k] = char(math.random(0, 255)) end
  return concat(out)
end

local function plain(pattern) return (pattern:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

local function word_count(v)
  if type(v) == "string" then
    local n = 0
    for _ in v:gmatch("%S+") do n = n + 1 end
    return n
  elseif type(v) == "number" or type(v) == "boolean" then
    return 1
  elseif is_array(v) then
    local n = 0
    for _, x in ipairs(v) do n = n + word_count(x) end
    return n
  elseif is_object(v) then
    local n = 0
    for k, x in pairs(v) do n = n + word_count(k) + word_count(x) end
    return n
  end
  return 0
end

local function length(v)
  if type(v) == "string" then return #v end
  if is_array(v) then return #v end
  if is_object(v) then local n = 0 for _ in pairs(v) do n = n + 1 end return n end
  fail("length() needs a string, a list or an object")
end

local function kind_of(v)
  if type(v) == "number" then return v == floor(v) and "integer" or "float" end
  if is_array(v) then return "array" end
  if is_object(v) then return "object" end
  return type(v)
end

-- The functions templates call; `c` is the render context (headers, extractions, data).
R.call = {
  header = function(c, name) return R.hdr(c, text(name):lower()) end,
  request_header = function(c, name) return R.rqh(c, text(name):lower()) end,
  extraction = function(c, name) return c.extractions[text(name)] or "" end,
  body = function(c) return c.raw or "" end,
  context = function(c) return c.data end,
  env = function(_, name) return os.getenv(text(name)) or "" end,
  base64_encode = function(_, s) return b64encode(text(s), B64, true) end,
  base64url_encode = function(_, s) return b64encode(text(s), B64URL, false) end,
  base64_decode = function(_, s) return b64decode(text(s), B64) end,
  base64url_decode = function(_, s) return b64decode(text(s), B64URL) end,
  substring = function(_, s, start, len)
    s = text(s)
    if type(start) ~= "number" or (len ~= nil and type(len) ~= "number") then return "" end
    if start < 0 or start >= #s then return "" end
    if len == nil or len <= 0 or start + len > #s then return sub(s, start + 1) end
    return sub(s, start + 1, start + len)
  end,
  replace_with_random = function(c, s, pattern)
    s, pattern = text(s), text(pattern)
    if pattern == "" then return s end
    c.randoms = c.randoms or {}
    local random = c.randoms[pattern]
    if random == nil then
      random = b64encode(random_bytes(16), B64, false)
      c.randoms[pattern] = random
    end
    return (s:gsub(plain(pattern), (random:gsub("%%", "%%%%"))))
  end,
  raw_string = function(_, s)
    if type(s) ~= "string" then return s end
    return sub(quote(s), 2, -2)
  end,
  word_count = function(_, v) return word_count(v) end,
  dynamic_metadata = function(c, key, namespace)
    local all = c.handle:streamInfo():dynamicMetadata()
    local v = all:get(text(namespace or "io.vendor.transformation"))
    for part in text(key):gmatch("[^:]+") do -- `a:b` is key b inside key a
      if type(v) ~= "table" then return "" end
      v = v[part]
    end
    if v == nil then return "" end
    if type(v) == "table" then return R.encode(v) end
    if type(v) == "boolean" then return v and "true" or "false" end
    return v
  end,
  exists = function(c, name) return R.var(c.data, { text(name) }, R.MISSING) ~= R.MISSING end,
  existsIn = function(_, obj, name) return type(obj) == "table" and obj[text(name)] ~= nil end,
  upper = function(_, s) return text(s):upper() end,
  lower = function(_, s) return text(s):lower() end,
  capitalize = function(_, s) s = text(s):lower(); return s:sub(1, 1):upper() .. s:sub(2) end,
  length = function(_, v) return length(v) end,
  first = function(_, v) if is_array(v) then return v[1] end fail("first() needs a list") end,
  last = function(_, v) if is_array(v) then return v[#v] end fail("last() needs a list") end,
  at = function(_, v, k)
    if is_array(v) and type(k) == "number" then return v[k + 1] end
    if is_object(v) then return v[text(k)] end
    fail("at() needs a list and an index, or an object and a key")
  end,
  join = function(_, v, sep)
    if not is_array(v) then fail("join() needs a list") end
    local parts = {}
    for k, x in ipairs(v) do parts[k] = R.show(x) end
    return concat(parts, text(sep))
  end,
  replace = function(_, s, from, to)
    from = text(from)
    if from == "" then return text(s) end
    return (text(s):gsub(plain(from), (text(to):gsub("%%", "%%%%"))))
  end,
  int = function(_, v)
    local n = tonumber(v)
    if not n then fail("int() cannot convert " .. R.encode(v)) end
    return n >= 0 and floor(n) or -floor(-n)
  end,
  float = function(_, v)
    local n = tonumber(v)
    if not n then fail("float() cannot convert " .. R.encode(v)) end
    return n
  end,
  round = function(_, v, digits)
    local scale = 10 ^ number(digits)
    return floor(number(v) * scale + 0.5) / scale
  end,
  range = function(_, n) local out = array() for k = 1, number(n) do out[k] = k - 1 end return out end,
  min = function(_, v)
    local best
    for _, x in ipairs(v) do if best == nil or R.less(x, best) then best = x end end
    return best == nil and NULL or best
  end,
  max = function(_, v)
    local best
    for _, x in ipairs(v) do if best == nil or R.less(best, x) then best = x end end
    return best == nil and NULL or best
  end,
  sort = function(_, v)
    local out = array()
    for k, x in ipairs(v) do out[k] = x end
    sort(out, R.less)
    return out
  end,
  odd = function(_, v) return number(v) % 2 == 1 end,
  even = function(_, v) return number(v) % 2 == 0 end,
  divisibleBy = function(_, v, d) return number(d) ~= 0 and number(v) % d == 0 end,
  isArray = function(_, v) return is_array(v) end,
  isObject = function(_, v) return is_object(v) end,
  isString = function(_, v) return type(v) == "string" end,
  isBoolean = function(_, v) return type(v) == "boolean" end,
  isNumber = function(_, v) return type(v) == "number" end,
  isInteger = function(_, v) return kind_of(v) == "integer" end,
  isFloat = function(_, v) return kind_of(v) == "float" end,
}

-- `for` over a list (values) or an object (keys in order).
function R.each(v)
  if is_array(v) then return v, nil end
  if is_object(v) then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    sort(keys)
    return keys, v
  end
  fail("{% for %} needs a list or an object")
end

function R.loop(k, n)
  return object({ index = k - 1, index1 = k, is_first = k == 1, is_last = k == n })
end

return R
