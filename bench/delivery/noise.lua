-- Noise beside the hot reads: NOISE_METHOD (POST by default) to the URL's path, anonymous, with a
-- small JSON body for POST; NOISE_DELAY_MS > 0 makes each connection wait that long between requests.
wrk.method = os.getenv("NOISE_METHOD") or "POST"
if wrk.method ~= "GET" then
  wrk.body = '{"hello":"world"}'
  wrk.headers["Content-Type"] = "application/json"
end
local d = tonumber(os.getenv("NOISE_DELAY_MS") or "0")
if d > 0 then
  delay = function() return d end
end
