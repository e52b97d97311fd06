--- The sessions this Neovim knows: one transcript per session, and which one the panel shows.
---
--- Notifications of every session are recorded (several can run at once); the panel
--- follows the current one. `User` autocmds `AgentlsEvent` and `AgentlsSettled` let
--- users (and tests) react to runs.
local panel = require("agentls.panel")
local transcript = require("agentls.transcript")

local M = {}

---@type table<string, agentls.Transcript>
M.transcripts = {}
---@type string?
M.current = nil

---@return agentls.Transcript
function M.transcript(session_id)
  local t = M.transcripts[session_id]
  if not t then
    t = transcript.new(session_id)
    M.transcripts[session_id] = t
  end
  return t
end

---@return agentls.Transcript?
function M.current_transcript()
  return M.current and M.transcripts[M.current] or nil
end

--- Make `session_id` the panel's session (with `per_user_server`, remembered for the workspace:
--- a new Neovim comes back to it, `M.reattach`).
function M.set_current(session_id)
  M.current = session_id
  panel.show(M.transcript(session_id))
  local config = require("agentls.config")
  if config.options.per_user_server then
    M.remember(config.root_dir(), session_id)
  end
end

--- Something of `session_id` changed: redraw if the panel shows it.
function M.changed(session_id)
  if session_id == M.current then
    panel.schedule()
  end
end

--- Request `method` about `session_id`: the reply goes to `on_reply(err, result)`, then to
--- `callback(err, result)` if given.
local function session_request(method, session_id, on_reply, callback)
  require("agentls.client").request(method, { sessionId = session_id }, function(err, result)
    on_reply(err, result)
    if callback then
      callback(err, result)
    end
  end)
end

--- Re-read a session's transcript (after lost notifications, or to show a loaded session).
function M.reload(session_id, callback)
  session_request("agent/getMessages", session_id, function(err, result)
    if err then
      require("agentls.util").fail(err)
    else
      M.transcript(session_id):load(result.messages)
      M.changed(session_id)
    end
  end, callback)
end

--- Read a session's settings (model, queue, whether it runs), then its token and cost figures.
function M.refresh_state(session_id, callback)
  session_request("agent/getState", session_id, function(err, result)
    if not err then
      M.transcript(session_id):set_state(result)
      M.changed(session_id)
      M.refresh_stats(session_id)
    end
  end, callback)
end

--- Read a session's spend against its budget and its sandbox (`agent/getState`) during a run:
--- only those (an answer that comes after the run's `agent/settled` must not mark it running).
function M.refresh_budget(session_id)
  session_request("agent/getState", session_id, function(err, result)
    if not err and type(result) == "table" then
      local t = M.transcript(session_id)
      t.budget = type(result.budget) == "table" and result.budget or t.budget
      t.sandbox = type(result.sandbox) == "table" and result.sandbox or t.sandbox
      t:_changed()
      M.changed(session_id)
    end
  end)
end

--- Read a session's tokens, cost and context size (`agent/getStats`) for the winbar.
function M.refresh_stats(session_id, callback)
  session_request("agent/getStats", session_id, function(err, result)
    if not err and type(result) == "table" then
      M.transcript(session_id).stats = result
      M.transcript(session_id):_changed()
      M.changed(session_id)
    end
  end, callback)
end

--- The sessions of a server that stopped, which the next command loads into the new one.
---@type table<string, boolean>
M.detached = {}

--- `callback(nil)` once `session_id` is in the running server: a session of a server that
--- stopped is loaded again first (`agent/loadSession`, then its transcript re-read), or with
--- the per-user server (where it may still be live, even running) reattached (`M.reattach`);
--- `callback(err)` if that fails.
function M.attach(session_id, callback)
  if not M.detached[session_id] then
    return callback(nil)
  end
  if require("agentls.config").options.per_user_server then
    return M.reattach(session_id, callback)
  end
  M.load_stored(session_id, callback)
end

--- Load a stored session into the server (`agent/loadSession`; a session live in the per-user
--- server is attached to instead), then read its transcript and state; `callback(err)`.
function M.load_stored(session_id, callback)
  local client = require("agentls.client")
  client.request("agent/loadSession", { sessionId = session_id }, function(err)
    if err then
      return callback(err)
    end
    M.detached[session_id] = nil
    local t = M.transcript(session_id)
    t.left, t.sync = nil, nil
    t.last_seq = nil -- a server that loaded it numbers its notifications anew
    M.reload(session_id, function(reload_err)
      M.refresh_state(session_id)
      callback(reload_err)
    end)
  end)
end

--- How many times a sync starts again when the server says notifications were lost (`gap`).
local SYNC_TRIES = 3

--- Bring the transcript of `session_id` up to date with the session in the server, with no gap
--- and nothing twice: `agent/getMessages` (the transcript and the `seq` it reflects), then
--- `agent/attach {since: seq}` (the notifications after it are sent again, then the live ones
--- follow). While it runs, `t.sync` says which notifications apply (see `accept`).
--- `callback(err)`; an `unknownSession` error when the session is not live.
local function sync(session_id, callback)
  local client = require("agentls.client")
  local t = M.transcript(session_id)
  local tries = 0
  local function again()
    tries = tries + 1
    t.sync = "loading"
    client.request("agent/getMessages", { sessionId = session_id }, function(err, result)
      if err then
        t.sync = nil
        return callback(err)
      end
      t:load(result.messages)
      t.last_seq = type(result.seq) == "number" and result.seq or nil
      t.sync = "attaching"
      M.changed(session_id)
      local params = { sessionId = session_id, since = t.last_seq }
      client.request("agent/attach", params, function(attach_err, attached)
        t.sync = nil
        if attach_err then
          if type(attach_err) == "table" and attach_err.code == -32601 then
            return callback(nil) -- a server without agent/attach: the transcript is read
          end
          return callback(attach_err)
        end
        attached = type(attached) == "table" and attached or {}
        local last = type(attached.seq) == "number" and attached.seq or nil
        -- every notification up to `last` came before the answer: one missing is lost
        local behind = last ~= nil and (t.last_seq == nil or t.last_seq < last)
        if (attached.gap == true or behind) and tries < SYNC_TRIES then
          return again()
        end
        if last and (t.last_seq == nil or t.last_seq < last) then
          t.last_seq = last
        end
        callback(nil)
      end)
    end)
  end
  again()
end

--- Come back to session `session_id` (after a restart of Neovim or of its client, under the
--- per-user server): its transcript is read and the client attached to it from there on (a run
--- that went on meanwhile streams on into the panel); a session that is not live is loaded
--- (`agent/loadSession`). Then its state is read; `callback(err)`.
function M.reattach(session_id, callback)
  local client = require("agentls.client")
  local t = M.transcript(session_id)
  if M.detached[session_id] then -- what the panel showed before the connection closed is stale
    t.running, t.status, t.error_message = false, "idle", nil
  end
  sync(session_id, function(err)
    if err and client.error_kind(err) == "unknownSession" then
      return M.load_stored(session_id, callback)
    end
    if err then
      return callback(err)
    end
    M.detached[session_id] = nil
    t.left = nil
    M.changed(session_id)
    M.refresh_state(session_id, function()
      callback(nil)
    end)
  end)
end

--- Notifications were lost (a gap in `seq`): read the transcript again and replay from there.
function M.resync(session_id)
  sync(session_id, function(err)
    if err then
      require("agentls.util").fail(err)
    end
    M.changed(session_id)
  end)
end

--- Whether a notification of `t` with `seq` applies. Every session notification carries `seq`,
--- one more than the session's last. While a sync reads the transcript, none applies (the
--- transcript reflects it, or `agent/attach` sends it again); while it attaches, only the next
--- one in order (the replay; live ones ahead of it come again in it, ones already counted are
--- sent twice). Otherwise a gap starts a sync, and the notification waits for its replay.
local function accept(t, seq)
  if t.sync == "loading" then
    return false
  end
  if type(seq) ~= "number" then
    return true
  end
  if t.sync == "attaching" then
    if t.last_seq == nil or seq == t.last_seq + 1 then
      t.last_seq = seq
      return true
    end
    return false
  end
  if t:check_seq(seq) then
    return true
  end
  M.resync(t.session_id)
  return false
end

--- Whether a notification about one session applies (see `accept`): for the handlers of the
--- notifications not handled here (`agent/branch`).
function M.accept(params)
  return accept(M.transcript(params.sessionId), params.seq)
end

--- The handler of a notification about one session: `update(transcript, params)`, a redraw,
--- then the `User` autocmd `pattern`, if given, with the params as `data`.
local function session_notification(update, pattern)
  return function(params)
    if type(params) ~= "table" or not params.sessionId then
      return
    end
    local t = M.transcript(params.sessionId)
    if not accept(t, params.seq) then
      return
    end
    update(t, params)
    M.changed(params.sessionId)
    if pattern then
      vim.api.nvim_exec_autocmds("User", { pattern = pattern, modeline = false, data = params })
    end
  end
end

--- `agent/event`
M.on_event = session_notification(function(t, params)
  t:apply(params.event, params.runId)
  local event = params.event
  if type(event) == "table" and event.type == "tool_execution_end" then
    require("agentls.review").tool_ended(params.sessionId, event.toolCallId)
    require("agentls.permissions").drop(event.toolCallId)
  elseif type(event) == "table" and event.type == "turn_end" then
    M.refresh_budget(params.sessionId) -- the spend against the budget, turn by turn
  end
end, "AgentlsEvent")

--- `agent/queue`
M.on_queue = session_notification(function(t, params)
  t:set_queue(params)
end)

--- `agent/settled`; the state is read again (the context files may have changed during the run).
M.on_settled = session_notification(function(t, params)
  t:settled(params)
  require("agentls.review").session_settled(params.sessionId)
  require("agentls.permissions").drop_run(params.sessionId)
  M.refresh_state(params.sessionId)
  M.notify_finished(params)
end, "AgentlsSettled")

--- A run ended while its panel is not in sight: say so (`notify_on_finish`).
function M.notify_finished(params)
  local config = require("agentls.config")
  if not config.options.notify_on_finish then
    return
  end
  local visible = params.sessionId == M.current
    and vim.tbl_contains(vim.api.nvim_tabpage_list_wins(0), panel.windows()[1] or -1)
  if visible then
    return
  end
  local reason = params.stopReason or "stop"
  local session = params.sessionId:sub(1, 8)
  local text, level
  local budget = require("agentls.transcript").budget_usage(params.budget)
  if budget then
    text, level = ("stopped by its budget (session %s): %s"):format(session,
      require("agentls.transcript").budget_usage_text(budget)), vim.log.levels.WARN
  elseif reason == "error" then
    text, level = ("the agent stopped with an error (session %s): %s"):format(session, params.errorMessage or "?"),
      vim.log.levels.ERROR
  elseif reason == "aborted" then
    text, level = ("the run was aborted (session %s)"):format(session), vim.log.levels.WARN
  else
    text, level = ("the agent finished (session %s): :AgentPanel shows the answer"):format(session), vim.log.levels.INFO
  end
  require("agentls.util").notify(text, level)
end

--- `agent/compaction`
M.on_compaction = session_notification(function(t, params)
  t:compaction(params)
end)

--- `agent/bashOutput`
M.on_bash_output = session_notification(function(t, params)
  t:bash_output(params.bashId, params.chunk)
end)

--- `agent/bashEnd`
M.on_bash_end = session_notification(function(t, params)
  t:bash_ended(params.bashId, params.message)
end)

--- The server is gone: its sessions stopped running, their running rows failed and their
--- progress is cleared. The panel keeps the transcripts; the next command starts a new
--- server and loads the current session into it again (`M.attach`).
function M.server_stopped()
  require("agentls.review").server_stopped()
  require("agentls.permissions").drop_all()
  require("agentls.progress").clear()
  for id, t in pairs(M.transcripts) do
    t:server_lost("the agentls server stopped")
    t.last_seq = nil -- a new server numbers events from 1 again
    t.sync = nil
    M.detached[id] = true
  end
  panel.schedule()
end

--- The connection to the per-user server closed (the bridge ended): the runs go on there, but
--- this Neovim gets none of their notifications until it reattaches (the next command on a
--- session does, `M.attach`). Its questions and progress are dropped; the transcripts stay.
function M.connection_lost()
  require("agentls.review").server_stopped()
  require("agentls.permissions").drop_all()
  require("agentls.progress").clear()
  for id, t in pairs(M.transcripts) do
    t.sync = nil
    M.detached[id] = true
  end
  panel.schedule()
end

-- the session each workspace showed last, for the per-user server ---------------------------

--- The file that keeps, per workspace folder, the session the panel showed last.
function M.memory_path()
  return vim.fs.joinpath(vim.fn.stdpath("state"), "agentls", "sessions.json")
end

local function read_memory()
  local file = io.open(M.memory_path(), "r")
  if not file then
    return {}
  end
  local text = file:read("*a")
  file:close()
  local ok, decoded = pcall(vim.json.decode, text)
  return ok and type(decoded) == "table" and decoded or {}
end

--- The session the panel showed last in workspace `root` (with `per_user_server`), if any.
---@return string?
function M.remembered(root)
  local id = read_memory()[root]
  return type(id) == "string" and id ~= "" and id or nil
end

--- Remember `session_id` as the one workspace `root` shows (nil: forget it).
function M.remember(root, session_id)
  local memory = read_memory()
  if memory[root] == session_id then
    return
  end
  memory[root] = session_id
  local path = M.memory_path()
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local tmp = path .. ".tmp"
  local file = io.open(tmp, "w")
  if not file then
    return
  end
  file:write(vim.json.encode(next(memory) and memory or vim.empty_dict()))
  file:close()
  os.rename(tmp, path)
end

return M
