-- End-to-end tests of sessions in the Neovim plugin: :AgentCompact, :AgentRename,
-- :AgentDeleteSession, :AgentSessions after a server restart, a server that dies during a
-- run, :AgentDetach and :AgentAttach mid-answer, and a gap in seq, against the real server on
-- the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/sessions.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local client = require("agentls.client")
local panel = require("agentls.panel")
local permissions = require("agentls.permissions")
local progress = require("agentls.progress")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

test(":AgentCompact shows a compaction row, its summary folded; <CR> unfolds it", function()
  local summary = "## Goal\nTest the Neovim panel.\n\n## Progress\nTwo answers."
  -- the summary answers the compaction's two requests (the cut splits the last turn)
  h.script({
    { content = "First answer." },
    { content = "Second answer." },
    { content = summary },
    { content = summary },
  })
  local session
  client.request("agent/newSession", { cwd = env.ws, compaction = { keepRecentTokens = 1 } }, function(err, result)
    assert(not err, vim.inspect(err))
    session = result.sessionId
    state.set_current(session)
    state.refresh_state(session)
  end)
  wait(10000, function()
    return session ~= nil
  end, "a session that keeps little")
  for _, prompt in ipairs({ "one", "two" }) do
    h.settles(session, function()
      vim.cmd("AgentPrompt " .. prompt)
    end)
  end
  h.notes = {}
  vim.cmd("AgentCompact keep the test names")
  wait(10000, function()
    return h.noted("compacted: ")
  end, "the compaction")
  panel.render()
  local text = h.panel_text()
  local heading = text:match("▍Compaction · manual · [%d,]+ → [%d,]+ tokens\n")
  expect(heading, "a compaction row with the tokens before and after:\n" .. text)
  local _, rows = text:gsub("▍Compaction", "")
  expect(rows == 1, "one row for the compaction (its summary message joins it):\n" .. text)
  local folded = "  ▸ summary, %d+ lines: Test the Neovim panel%. %(<CR> shows it%)\n"
  expect(text:find(folded), "the summary folded:\n" .. text)
  expect(not text:find("## Progress", 1, true), "the rest hidden")
  local row
  for i, line in ipairs(panel.lines()) do
    if line:find("▸ summary", 1, true) then
      row = i
    end
  end
  local win = panel.windows()[1]
  vim.api.nvim_win_call(win, function()
    vim.api.nvim_win_set_cursor(win, { row, 0 })
    vim.cmd("normal " .. vim.keycode("<CR>"))
  end)
  text = h.panel_text()
  local unfolded = "  ▾ summary (<CR> folds it)\n  ## Goal\n  Test the Neovim panel.\n"
  expect(text:find(unfolded, 1, true), "unfolded:\n" .. text)
  text = h.reloaded_text(session)
  expect(text:find("▍Compaction · [%d,]+ tokens before\n  ▸ summary"), "the stored compaction:\n" .. text)
  expect(text:find("Second answer.", 1, true), "the whole history is still shown")
end)

test(":AgentRename names the session, and the session list shows the name", function()
  local session = h.settled_run({ { content = "Named." } }, "a prompt to be named")
  h.notes = {}
  vim.cmd("AgentRename Refactor auth")
  wait(5000, function()
    return h.noted('session named "Refactor auth"')
  end, "the session named")
  local listed = client.request_sync("agent/listSessions", { cwd = env.ws }, 5000)
  local title
  for _, info in ipairs(listed.sessions) do
    if info.sessionId == session then
      title = info.title
    end
  end
  expect(title == "Refactor auth", "listed by its name: " .. tostring(title))
  vim.cmd("AgentRename")
  wait(5000, function()
    return h.noted("session name cleared")
  end, "the name cleared")
end)

test(":AgentDeleteSession deletes a stored session", function()
  local session = h.settled_run({ { content = "To be deleted." } }, "doomed")
  h.stub_select(function(items)
    for _, item in ipairs(items) do
      if item == "Delete" or (type(item) == "table" and item.sessionId == session) then
        return item
      end
    end
  end)
  h.notes = {}
  vim.cmd("AgentDeleteSession")
  wait(5000, function()
    return h.noted("deleted session " .. session:sub(1, 8))
  end, "the session deleted")
  expect(state.current == nil, "the panel left it")
  local listed = client.request_sync("agent/listSessions", { cwd = env.ws }, 5000)
  for _, info in ipairs(listed.sessions) do
    expect(info.sessionId ~= session, "not listed any more")
  end
end)

test("a stored session is loaded after a server restart with :AgentSessions", function()
  local first_session = h.settled_run({ { content = "Hello from the faux model." } }, "Say hello")
  h.new_session() -- the panel shows another one
  local stored = client.request_sync("agent/listSessions", { cwd = env.ws }, 5000).sessions
  local ids = vim.tbl_map(function(info)
    return info.sessionId
  end, stored)
  expect(vim.tbl_contains(ids, first_session), "the session is stored: " .. vim.inspect(ids))
  client.stop()
  wait(5000, function()
    return client.get() == nil
  end, "the server stopped")
  local asked = h.stub_select(function(items)
    for _, item in ipairs(items) do
      if item.sessionId == first_session then
        return item
      end
    end
  end)
  vim.cmd("AgentSessions")
  wait(10000, function()
    return state.current == first_session and h.panel_text():find("Hello from the faux model", 1, true) ~= nil
  end, "the stored transcript in the panel")
  expect(#asked == 1 and #asked[1].items == #stored, "listed the workspace's sessions")
  expect(asked[1].format(asked[1].items[1]):find("messages", 1, true), "labels sessions")
end)

test("a dead server: said so, its rows failed, its progress cleared; the next prompt resumes the session", function()
  h.script({ h.tool_call("k1", "bash", { command = "echo started; sleep 3" }), { content = "never" } })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt run it")
  wait(10000, function()
    panel.render()
    return permissions.pending.k1 ~= nil
  end, "the permission question")
  permissions.answer("k1", "allowOnce")
  wait(10000, function()
    return h.panel_text():find("echo started; sleep 3  · running", 1, true) ~= nil
      and progress.status():find("bash:", 1, true) ~= nil
  end, "the tool running, with progress")
  h.notes = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    vim.uv.kill(pid, "sigkill")
  end
  wait(5000, function()
    return client.get() == nil
  end, "the server gone")
  wait(2000, function()
    return h.noted("the server stopped", vim.log.levels.ERROR)
  end, "the notification")
  expect(h.noted("The next prompt resumes session " .. session:sub(1, 8)), "says the session goes on")
  panel.render()
  local text = h.panel_text()
  expect(text:find("echo started; sleep 3  · failed", 1, true), "the row failed:\n" .. text)
  expect(text:find("the agentls server stopped", 1, true), "says why:\n" .. text)
  expect(progress.status() == "", "no stale progress: " .. progress.status())
  expect(not require("agentls").status():find("bash", 1, true), require("agentls").status())
  local models = vim.fn.getcompletion("AgentModel fa", "cmdline") -- starts a server to ask
  expect(vim.deep_equal(models, { "faux/faux-1" }), "models complete without a server: " .. vim.inspect(models))
  h.script({ { content = "Resumed here." } })
  vim.cmd("AgentPrompt go on")
  wait(15000, function()
    return h.panel_text():find("Resumed here.", 1, true) ~= nil
  end, "the answer in the same session")
  h.wait_settled(session)
  expect(state.current == session, "the same session")
  text = h.panel_text()
  expect(text:find("You\n  run it\n", 1, true) and text:find("You\n  go on\n", 1, true), "its history goes on:\n" .. text)
end)

-- The answer goes on streaming into the panel; aborted, it is there once, as the stored session has it.
local function streams_on_once(session, marker)
  local streamed = #h.panel_text()
  h.wait(10000, function()
    return #h.panel_text() > streamed
  end, "the answer streaming on")
  vim.cmd("AgentAbort")
  h.wait_settled(session)
  local text = h.panel_text()
  local _, answers = text:gsub(marker, "%0")
  expect(answers == 1, "the answer once:\n" .. text)
  local stored = h.reloaded_text(session)
  expect(text == stored, ("streamed:\n%s\n--- stored:\n%s"):format(text, stored))
end

test(":AgentDetach mid-answer, :AgentAttach: the answer so far is sent again, then it streams on", function()
  local session = h.slow_run({ { content = "Detach test. " .. h.LONG } }, "talk", "Detach test.", "streaming started")
  local client = require("agentls.client")
  local function clients()
    local result = client.request_sync("agent/listSessions", { cwd = h.env.ws }, 5000)
    for _, info in ipairs(result and result.sessions or {}) do
      if info.sessionId == session then
        return info.clients, info.running
      end
    end
  end
  h.notes = {}
  vim.cmd("AgentDetach")
  h.wait(5000, function()
    return state.detached[session] == true
  end, "detached")
  local attached, running = clients()
  expect(attached == 0 and running, ("clients %s, running %s"):format(attached, running))
  local t = state.transcripts[session]
  local seen = t.last_seq
  vim.cmd("AgentAttach " .. session:sub(1, 8))
  h.wait(5000, function()
    return not state.detached[session] and h.noted("attached to session " .. session:sub(1, 8) .. " (running)")
  end, "attached again")
  expect(clients() == 1, "one client again")
  expect(t.last_seq >= seen, ("seq %s after %s"):format(t.last_seq, seen))
  streams_on_once(session, "Detach test")
end)

test(":AgentAttach without an id: the workspace's sessions, live ones first, marked", function()
  local asked = h.stub_select(function(items)
    return items[1]
  end)
  h.notes = {}
  vim.cmd("AgentAttach")
  h.wait(5000, function()
    return #asked == 1 and h.noted("attached to session ")
  end, "the list, then attached")
  local items, label = asked[1].items, asked[1].format
  expect(items[1].loaded and not items[#items].loaded, "live first, stored last: " .. vim.inspect(items))
  expect(label(items[1]):find("1 client]", 1, true), label(items[1]))
  expect(label(items[#items]):find("[stored]", 1, true), label(items[#items]))
  expect(state.current == items[1].sessionId, "the chosen session is the panel's")
end)

test("a gap in seq mid-answer: the transcript is read again and the rest replayed, nothing twice", function()
  local session = h.slow_run({ { content = "Gap test. " .. h.LONG } }, "talk again", "Gap test.", "streaming started")
  local t = state.transcripts[session]
  local epoch = t.epoch
  t.last_seq = t.last_seq - 2 -- as if two notifications were lost
  h.wait(5000, function()
    return t.epoch > epoch and t.sync == nil
  end, "the transcript read again and the client attached from there")
  streams_on_once(session, "Gap test")
end)

h.finish()
