-- ratelab for HAProxy 2.5 and later (Lua 5.3, core.httpclient): every request is decided by
-- `ratelab-cli serve --mode auth` before HAProxy forwards it. A refusal is answered here with
-- ratelab's status, Retry-After, rate-limit fields and problem+json body; a pass goes on, and
-- its rate-limit fields are kept in txn.ratelab_* variables for http-response rules.
--
-- haproxy.cfg (see haproxy.cfg beside this file):
--   global
--       lua-load /usr/share/ratelab/deploy/haproxy/ratelab.lua
--       setenv RATELAB_URL http://127.0.0.1:8081/
--   frontend web
--       http-request lua.ratelab_decide
--
-- What ratelab sees: the method and target of the request (X-Original-Method, X-Original-URI),
-- its headers (Authorization, API keys) and X-Forwarded-For with the client's address
-- appended, so the policy's trusted_proxies must list HAProxy's own address.

-- Read when first needed: global "setenv" lines may come after lua-load.
--   RATELAB_URL       where ratelab listens (default http://127.0.0.1:8081/)
--   RATELAB_ON_ERROR  when ratelab does not answer: "deny" (503, the default, as nginx's
--                     auth_request does) or "allow"
local function setting(name, default)
    return os.getenv(name) or default
end

-- Header values come indexed from 0 from HAProxy; the HTTP client wants Lua lists.
local function values(list)
    local out = {}
    if list == nil then return out end
    local i = 0
    while list[i] ~= nil do
        out[#out + 1] = list[i]
        i = i + 1
    end
    for _, v in ipairs(list) do out[#out + 1] = v end
    return out
end

local function first(headers, name)
    local v = headers[name]
    if v == nil then return nil end
    return v[0] or v[1]
end

-- Fields of ratelab's answer a client sees, on refusals and (through variables) on passes.
local rate_fields = { "ratelimit-policy", "ratelimit", "x-ratelimit-limit",
                      "x-ratelimit-remaining", "x-ratelimit-reset" }

core.register_action("ratelab_decide", { "http-req" }, function(txn)
    local request = txn.http:req_get_headers()
    local headers = {}
    for name, list in pairs(request) do
        if name ~= "content-length" and name ~= "transfer-encoding" and name ~= "connection" then
            headers[name] = values(list)
        end
    end
    local forwarded = values(request["x-forwarded-for"])
    forwarded[#forwarded + 1] = txn.sf:src()
    headers["x-forwarded-for"] = { table.concat(forwarded, ", ") }
    headers["x-original-method"] = { txn.sf:method() }
    headers["x-original-uri"] = { txn.sf:url() }

    local client = core.httpclient()
    local response = client:get{ url = setting("RATELAB_URL", "http://127.0.0.1:8081/"),
                                 headers = headers, timeout = 2000 }
    if response == nil or response.status == nil or response.status == 0 then
        txn:set_var("txn.ratelab_status", "error")
        if setting("RATELAB_ON_ERROR", "deny") == "allow" then return end
        local reply = txn:reply{ status = 503, reason = "Service Unavailable",
                                 headers = { ["content-type"] = { "text/plain" } },
                                 body = "rate-limit decision unavailable\n" }
        txn:done(reply)
        return
    end
    local h = response.headers or {}
    txn:set_var("txn.ratelab_status", tostring(response.status))
    for _, name in ipairs(rate_fields) do
        local v = first(h, name)
        if v ~= nil then txn:set_var("txn.ratelab_" .. name:gsub("-", "_"), v) end
    end
    if response.status >= 200 and response.status < 300 then return end

    -- A refusal: answer with ratelab's own answer.
    local out = { ["content-type"] = { first(h, "content-type") or "application/problem+json" } }
    for _, name in ipairs(rate_fields) do
        local v = first(h, name)
        if v ~= nil then out[name] = { v } end
    end
    local retry = first(h, "retry-after")
    if retry ~= nil then out["retry-after"] = { retry } end
    local reply = txn:reply{ status = response.status, headers = out, body = response.body or "" }
    txn:done(reply)
end)
