--- The queue of a live output's pushes (lunet.load.prometheus), as a value: what to send next,
--- what a reply means, what is dropped. Pure: no clock, no network; the output acts on its
--- answers. Each push holds the run's totals so far, so a push dropped for a newer one loses
--- only a point of the curve, never a count: the last push carries every total.
local M = {}

--- Pushes kept waiting at most: past them the oldest is dropped (and counted).
M.MAX = 20
--- Backoff after a failed try: BASE * 2^(tries - 1) seconds, at most CAP.
M.BASE, M.CAP = 0.5, 10

local Q = {}
Q.__index = Q

function M.new(max)
  return setmetatable({ max = max or M.MAX, items = {}, tries = 0, sent = 0, samples_sent = 0, dropped = 0,
                        samples_dropped = 0, failures = 0, stopped = nil, last_error = nil }, Q)
end

--- Adds a push of `samples` samples; a full queue drops its oldest first. Nothing is kept once
--- the output stopped (then the push is counted as dropped).
function Q:add(payload, samples)
  if self.stopped then
    self.dropped, self.samples_dropped = self.dropped + 1, self.samples_dropped + samples
    return
  end
  if #self.items >= self.max then
    local old = table.remove(self.items, 1)
    self.dropped, self.samples_dropped = self.dropped + 1, self.samples_dropped + old.samples
    self.tries = 0
  end
  self.items[#self.items + 1] = { payload = payload, samples = samples }
end

--- The push to send now, or nil.
function Q:head() return not self.stopped and self.items[1] or nil end

--- What a try of the head push came to: `status` (an HTTP status) or `err` (a message: no
--- answer). Returns "sent", "retry" and the seconds to wait, or "stop" (the receiver refused
--- the data: a 4xx other than 408 and 429, which retrying cannot change).
function Q:answered(status, err)
  if status and status >= 200 and status < 300 then
    local item = table.remove(self.items, 1)
    self.sent, self.samples_sent, self.tries = self.sent + 1, self.samples_sent + item.samples, 0
    return "sent"
  end
  self.failures = self.failures + 1
  self.last_error = err or ("HTTP " .. tostring(status))
  if status and status >= 400 and status < 500 and status ~= 408 and status ~= 429 then
    self.stopped = self.last_error
    for _, item in ipairs(self.items) do
      self.dropped, self.samples_dropped = self.dropped + 1, self.samples_dropped + item.samples
    end
    self.items = {}
    return "stop"
  end
  self.tries = self.tries + 1
  return "retry", math.min(M.CAP, M.BASE * 2 ^ (self.tries - 1))
end

--- Gives up what is still waiting (the run's end, past its flush timeout): counted as dropped.
function Q:abandon()
  for _, item in ipairs(self.items) do
    self.dropped, self.samples_dropped = self.dropped + 1, self.samples_dropped + item.samples
  end
  self.items = {}
end

return M
