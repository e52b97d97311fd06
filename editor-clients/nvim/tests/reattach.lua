-- End-to-end tests of live sessions (`per_user_server = true`): a run on the per-user server
-- goes on when Neovim is gone, and the next Neovim comes back to it with no gap. Three Neovims,
-- one after the other, each running this script with a phase (tests/editor/test_nvim.py runs
-- them and stops the per-user server after):
--
--   AGENTLS_REATTACH_ROOT=DIR AGENTLS_REATTACH_SOCKET=SOCKET \
--     nvim --headless --clean -l editor-clients/nvim/tests/reattach.lua AGENTLS_EXECUTABLE PHASE
--
-- `before`: a run starts on the per-user server (`agentls serve --attach --listen unix:SOCKET`)
--   and stops in a bash call that waits for the file `gate1`; then this Neovim kills itself
--   (SIGKILL: no goodbye to the server), after printing its summary.
-- `after`: a new Neovim opens `gate1` while it is not attached: the run goes on, without any
--   client, up to a second bash call that waits for `gate2` (it touches `reached2` first).
--   :AgentPanel comes back to the session the workspace showed (remembered in stdpath("state")):
--   the whole transcript so far, the second call running. :AgentDetach; `gate2` opens and the
--   run goes on to a `write` that asks permission of no one; :AgentAttach SESSION sends what
--   was missed, then the open question; answered, the run goes on to another write, whose
--   question a second client (the bridge, spoken to frame by frame) answers first: this
--   Neovim's is withdrawn; the run settles, and the panel equals the stored transcript.
--   :AgentAttach's completion; the bridge killed, :AgentPanel and the next command
--   reattaching. Quits normally.
-- `stored`: after the per-user server was stopped, a new one holds no live session: :AgentPanel
--   loads the remembered session from disk (`unknownSession`, then `agent/loadSession`).
--
-- DIR holds the workspace (`ws`), the data folder (`data`), the faux script and the gates; it
-- is the same for the three phases, as are XDG_STATE_HOME and the socket.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local test, expect = h.test, h.expect

local phase = arg[2]
local root = assert(vim.env.AGENTLS_REATTACH_ROOT, "AGENTLS_REATTACH_ROOT is not set")
local env = {
  ws = root .. "/ws",
  data = root .. "/data",
  script = root .. "/faux.json",
  socket = assert(vim.env.AGENTLS_REATTACH_SOCKET, "AGENTLS_REATTACH_SOCKET is not set"),
  gate1 = root .. "/gate1",
  gate2 = root .. "/gate2",
  reached2 = root .. "/reached2",
  session = root .. "/session-id",
}
vim.fn.mkdir(env.ws, "p")
vim.fn.mkdir(env.data, "p")
env.ws = vim.uv.fs_realpath(env.ws)

h.agentls_exe = h.load_plugin(arg[1])
h.cancel_unexpected_questions()
vim.cmd.cd(env.ws)
h.env = env
h.setup_opts = {
  -- the server the bridge starts stops by itself 120 s after its last client, should the test
  -- leave it behind
  cmd = { h.agentls_exe, "serve", "--idle-exit", "120" },
  per_user_server = true,
  socket = env.socket,
  permissions = { bash = "allow", write = "ask" },
  init_options = { fauxScript = env.script, dataDir = env.data, projectTrust = "always" },
  panel = { redraw_ms = 10 },
}
require("agentls").setup(h.setup_opts)

local client = require("agentls.client")
local config = require("agentls.config")
local state = require("agentls.state")
local frames = require("agentls.frames")

--- A bash call that waits for `gate` (after touching `reached`, if given), then says `done`. It
--- gives up after a minute, should the test that opens the gate have failed.
local function waiting_call(id, text, gate, reached, done)
  local wait = "i=0; until [ -e %s ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done; echo %s"
  local command = wait:format(vim.fn.shellescape(gate), done)
  if reached then
    command = ("touch %s; %s"):format(vim.fn.shellescape(reached), command)
  end
  return {
    content = {
      { type = "text", text = text },
      { type = "toolCall", id = id, name = "bash", arguments = { command = command } },
    },
    stopReason = "toolUse",
  }
end

local function tool_status(session, id)
  local t = state.transcripts[session]
  local tool = t and t.tools[id]
  return tool and tool.status
end

--- The session of this workspace: `agent/listSessions`' entry.
local function listed(session)
  local result = client.request_sync("agent/listSessions", { cwd = env.ws }, 5000)
  for _, info in ipairs(result and result.sessions or {}) do
    if info.sessionId == session then
      return info
    end
  end
end

--- Another client of the per-user server, beside this Neovim's: the bridge on stdio, spoken to
--- frame by frame. `request(method, params)` waits for the response; `next(predicate)` for a
--- message the server sent that `predicate` accepts (the first not taken yet, in order);
--- `respond(id, result)` answers its request.
local function other_client()
  local reader, messages = frames.reader(), {}
  local process = vim.system(config.server_cmd(), {
    stdin = true,
    stdout = function(_, data)
      reader.feed(data)
    end,
    stderr = function() end,
  })
  local function parse()
    vim.list_extend(messages, reader.take())
  end
  local function send(message)
    process:write(frames.encode(message))
  end
  local c, last_id = {}, 0
  function c.next(predicate, what)
    local found
    h.wait(10000, function()
      parse()
      for i, message in ipairs(messages) do
        if predicate(message) then
          found = table.remove(messages, i)
          return true
        end
      end
      return false
    end, what)
    return found
  end
  function c.request(method, params)
    last_id = last_id + 1
    local id = last_id
    send({ id = id, method = method, params = params })
    local response = c.next(function(message)
      return message.id == id and message.method == nil
    end, "the answer to " .. method)
    assert(response.result ~= nil, method .. ": " .. vim.inspect(response.error))
    return response.result
  end
  function c.notify(method, params)
    send({ method = method, params = params })
  end
  function c.respond(id, result)
    send({ id = id, result = result })
  end
  function c.close()
    process:write(nil) -- the bridge ends with its input
    process:wait(5000)
  end
  return c
end

if phase == "before" then
  test("a run on the per-user server: the bridge's command, the session remembered for the workspace", function()
    h.script({
      waiting_call("c1", "Before the reload.", env.gate1, nil, "first done"),
      waiting_call("c2", "While away.", env.gate2, env.reached2, "second done"),
      {
        content = {
          { type = "text", text = "After the reload." },
          { type = "toolCall", id = "c3", name = "write", arguments = { path = "away.txt", content = "written\n" } },
        },
        stopReason = "toolUse",
      },
      {
        content = {
          { type = "text", text = "Once more." },
          { type = "toolCall", id = "c4", name = "write", arguments = { path = "again.txt", content = "again\n" } },
        },
        stopReason = "toolUse",
      },
      { content = "Wrote it.", stopReason = "stop" },
    })
    local session = h.new_session()
    vim.fn.writefile({ session }, env.session)
    local cmd = config.server_cmd()
    local want = { h.agentls_exe, "serve", "--idle-exit", "120", "--attach", "--listen", "unix:" .. env.socket }
    expect(vim.deep_equal(cmd, want), vim.inspect(cmd))
    expect(vim.deep_equal(client.get().config.cmd, want), vim.inspect(client.get().config.cmd))
    vim.cmd("AgentPrompt go")
    h.wait_panel("Before the reload.", "the first answer")
    h.wait(10000, function()
      return tool_status(session, "c1") == "running"
    end, "the first bash call running")
    expect(state.remembered(env.ws) == session, vim.inspect(state.remembered(env.ws)))
    local info = listed(session)
    expect(info and info.loaded and info.running and info.clients == 1, vim.inspect(info))
  end)

  test(":checkhealth says the per-user server is used, and its socket", function()
    local report = h.checkhealth()
    expect(report:find("per-user server: on (socket " .. env.socket, 1, true), report)
    expect(report:find("running: client", 1, true), report)
  end)

  local passed, failed = h.counts()
  io.stdout:write(("\n%d passed, %d failed\n"):format(passed, failed))
  io.stdout:flush()
  -- gone without a word to the server, as when the terminal closes: the bridge's input ends
  vim.uv.kill(vim.fn.getpid(), "sigkill")
  vim.wait(10000, function()
    return false
  end)
  os.exit(1)
end

local session = vim.fn.readfile(env.session)[1]

if phase == "after" then
  test("the run goes on while no Neovim is attached", function()
    expect(client.get() == nil, "no client yet")
    vim.fn.writefile({}, env.gate1)
    h.wait(20000, function()
      return vim.fn.filereadable(env.reached2) == 1
    end, "the second bash call (the run went on without a client)")
  end)

  test(":AgentPanel comes back to the workspace's session: the transcript so far, the call running", function()
    h.notes = {}
    vim.cmd("AgentPanel")
    h.wait(10000, function()
      return state.current == session and tool_status(session, "c2") == "running"
    end, "the session reattached, the second call running")
    h.wait_panel("While away.", "the second answer")
    local t = state.transcripts[session]
    expect(t.running and t.status == "running", ("running %s, status %s"):format(t.running, t.status))
    h.expect_shown(h.panel_text(), { "go", "Before the reload.", "first done", "While away." })
    expect(h.noted("attached to session " .. session:sub(1, 8) .. " (running)"), vim.inspect(h.notes))
    local info = listed(session)
    expect(info and info.loaded and info.running and info.clients == 1, vim.inspect(info))
  end)

  test(":AgentDetach mid-run; the run goes on to a question that waits for a client", function()
    h.notes = {}
    vim.cmd("AgentDetach")
    h.wait(5000, function()
      return state.detached[session] == true
    end, "detached")
    expect(h.noted("detached from session " .. session:sub(1, 8) .. "; its run goes on"), vim.inspect(h.notes))
    local info = listed(session)
    expect(info and info.loaded and info.running and info.clients == 0, vim.inspect(info))
    vim.fn.writefile({}, env.gate2)
    -- every finished message is on disk: the third answer is, and its write asks no one
    local file = vim.fs.find(session .. ".jsonl", { path = env.data, type = "file" })[1]
    expect(file, "the session's file in " .. env.data)
    h.wait(20000, function()
      return table.concat(vim.fn.readfile(file), "\n"):find("After the reload.", 1, true) ~= nil
    end, "the third answer stored (the run went on, detached)")
  end)

  test(":AgentAttach SESSION: what was missed, then the open question; answered, the run goes on", function()
    local questions = {}
    vim.ui.select = function(items, opts, on_choice)
      questions[#questions + 1] = { items = items, prompt = opts.prompt, answer = on_choice }
    end
    h.notes = {}
    vim.cmd("AgentAttach " .. session:sub(1, 8))
    h.wait(10000, function()
      return #questions == 1 and not state.detached[session]
    end, "the write's question, asked again of the client that attached")
    expect(questions[1].prompt:find("write", 1, true), questions[1].prompt)
    h.wait(5000, function()
      return tool_status(session, "c3") == "asking"
    end, "the write's row waiting for permission")
    h.wait_panel("After the reload.", "the third answer")
    h.expect_shown(h.panel_text(), { "While away.", "second done", "After the reload." })
    local info = listed(session)
    expect(info and info.loaded and info.running and info.clients == 1, vim.inspect(info))
    local allow = vim.tbl_filter(function(item)
      return item.id == "allowOnce"
    end, questions[1].items)[1]
    questions[1].answer(allow)
    h.wait(10000, function()
      return #questions == 2 and tool_status(session, "c4") == "asking"
    end, "the next write's question")
    expect(vim.fn.readfile(env.ws .. "/away.txt")[1] == "written", "the first write landed")
  end)

  test("a second client on the session answers the question first: this Neovim's is withdrawn", function()
    local other = other_client()
    other.request("initialize", {
      processId = vim.NIL,
      rootUri = vim.NIL,
      capabilities = { experimental = { agent = { requestPermission = true } } },
      initializationOptions = { dataDir = env.data },
    })
    other.notify("initialized", vim.empty_dict())
    local attached = other.request("agent/attach", { sessionId = session })
    expect(attached.attached == true, vim.inspect(attached))
    -- a client that attaches while a question is open gets it too
    local asked = other.next(function(message)
      return message.method == "agent/requestPermission" and message.params.toolCallId == "c4"
    end, "the open question, asked of the second client")
    local info = listed(session)
    expect(info and info.clients == 2, vim.inspect(info))
    local settled = h.settled
    local before = #settled
    h.notes = {}
    other.respond(asked.id, { outcome = "allowOnce" })
    h.wait(10000, function()
      return require("agentls.permissions").pending.c4 == nil
    end, "the question withdrawn here ($/cancelRequest)")
    expect(h.noted("the write question was withdrawn: answered in another client"), vim.inspect(h.notes))
    h.wait(20000, function()
      for i = before + 1, #settled do
        if settled[i].sessionId == session then
          return true
        end
      end
      return false
    end, "agent/settled")
    other.close()
    require("agentls.panel").render()
    local t = state.transcripts[session]
    expect(not t.running and t.status == "idle", ("running %s, status %s"):format(t.running, t.status))
    expect(tool_status(session, "c4") == "done", tostring(tool_status(session, "c4")))
    expect(vim.fn.readfile(env.ws .. "/again.txt")[1] == "again", "the second write landed")
    local streamed = h.panel_text()
    h.expect_shown(streamed, { "go", "Before the reload.", "first done", "While away.", "second done",
      "After the reload.", "Once more.", "Wrote it." })
    for _, once in ipairs({ "Before the reload%.", "While away%.", "After the reload%.", "Once more%.", "Wrote it%." }) do
      local _, count = streamed:gsub(once, "")
      expect(count == 1, once .. " once:\n" .. streamed)
    end
    local stored = h.reloaded_text(session)
    expect(streamed == stored, ("streamed:\n%s\n--- stored:\n%s"):format(streamed, stored))
  end)

  test(":AgentAttach completes the workspace's live session", function()
    local completions = vim.fn.getcompletion("AgentAttach ", "cmdline")
    expect(vim.tbl_contains(completions, session), vim.inspect(completions))
    completions = vim.fn.getcompletion("AgentAttach " .. session:sub(1, 4), "cmdline")
    expect(vim.deep_equal(completions, { session }), vim.inspect(completions))
  end)

  --- Kill the bridge (the client's process): a warning says the runs go on, nothing failed.
  local function kill_bridge()
    h.notes = {}
    local c = client.get()
    if vim.fn.has("nvim-0.11") == 1 then
      c:stop(true)
    else
      c.stop(true)
    end
    h.wait(5000, function()
      return client.get() == nil and state.detached[session] == true
    end, "the connection closed")
    expect(h.noted("the connection to the per-user server closed", vim.log.levels.WARN), vim.inspect(h.notes))
    expect(h.noted("its runs go on"), vim.inspect(h.notes))
    expect(not h.noted("failed"), vim.inspect(h.notes))
    h.expect_shown(h.panel_text(), { "Before the reload.", "Wrote it." })
  end

  test("the bridge ends: said so, the session kept; :AgentPanel or the next command reattaches", function()
    for _, command in ipairs({ "AgentPanel", "AgentStats" }) do
      kill_bridge()
      vim.cmd(command)
      h.wait(10000, function()
        return not state.detached[session] and client.get() ~= nil
      end, "reattached after :" .. command)
      local info = listed(session)
      expect(info and info.loaded and info.clients == 1, command .. ": " .. vim.inspect(info))
      h.expect_shown(h.panel_text(), { "Before the reload.", "Wrote it." })
    end
    h.wait(5000, function()
      return h.noted("session " .. session:sub(1, 8) .. ": ")
    end, ":AgentStats' figures")
  end)

  h.finish()
end

if phase == "stored" then
  test(":AgentPanel loads the remembered session that no server holds live any more", function()
    vim.cmd("AgentPanel")
    h.wait(10000, function()
      return state.current == session and h.panel_text():find("Wrote it.", 1, true) ~= nil
    end, "the session loaded")
    h.expect_shown(h.panel_text(), { "go", "Before the reload.", "first done", "While away.", "second done",
      "After the reload." })
    local info = listed(session)
    expect(info and info.loaded and info.clients == 1 and not info.running, vim.inspect(info))
  end)

  h.finish()
end

error("unknown phase " .. tostring(phase) .. ": before, after or stored")
