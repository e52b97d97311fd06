-- End-to-end tests of the session tree in the Neovim plugin (:AgentRewind, :AgentFork,
-- :AgentTree, the agent/branch notification) and of the queue's panel keys, against the real
-- server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/tree.lua [AGENTLS_EXECUTABLE]
--
-- As the feature files of run.lua: one server for every test, per-test lines on stdout,
-- "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local agentls_exe = h.load_plugin(arg[1])
local env = h.workspace(agentls_exe)

local client = require("agentls.client")
local panel = require("agentls.panel")
local prompt = require("agentls.prompt")
local state = require("agentls.state")
local tree = require("agentls.tree")

local test, wait, expect = h.test, h.wait, h.expect

h.cancel_unexpected_questions()

local LONG = h.LONG

local function path(name)
  return env.ws .. "/" .. name
end

local function read(name)
  return vim.fn.filereadable(path(name)) == 1 and vim.fn.readfile(path(name)) or nil
end

--- A file's bytes (nil: it does not exist).
local function bytes(name)
  local file = io.open(path(name), "rb")
  if not file then
    return nil
  end
  local data = file:read("a")
  file:close()
  return data
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local keys_in = h.keys_in

--- Record the `User` autocmd `pattern` from now on; `got()` is its data once it fired.
local function record(pattern)
  local seen = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = pattern,
    once = true,
    callback = function(args)
      seen.data = args.data or {}
    end,
  })
  return function()
    return seen.data
  end
end

--- Wait for the `User` autocmd `pattern` that `action()` leads to; its data.
local function after(pattern, action, ms)
  local got = record(pattern)
  action()
  wait(ms or 10000, function()
    return got() ~= nil
  end, "the User autocmd " .. pattern)
  panel.render()
  return got()
end

--- The session's stored transcript: `{role, text}` of each message.
local function stored(session)
  local transcript = require("agentls.transcript")
  return vim.tbl_map(function(message)
    return { role = message.role, text = transcript.content_text(message.content) }
  end, h.stored_messages(session))
end

local function roles_and_texts(messages)
  return vim.tbl_map(function(m)
    return m.role .. ": " .. m.text
  end, messages)
end

--- A vim.ui.select answer: the user message whose text is `text` in the message picker, the first
--- option (the default) in the other questions.
local function choose(text, answers)
  answers = answers or {}
  return function(items)
    if items[1] and items[1].entry_id then
      for _, item in ipairs(items) do
        if item.text == text then
          return item
        end
      end
      return nil
    end
    local answer = table.remove(answers, 1)
    if type(answer) == "number" then
      return items[answer]
    end
    return items[1]
  end
end

--- The prompt input's text, and close it.
local function take_prompt()
  local text = table.concat(lines(prompt.buf), "\n")
  return text
end

--- The 1-based line of `buf` that contains `text` (the last one when several do).
local function row_of(buf, text)
  return h.last_row(lines(buf), text)
end

local settles = h.settles

local session -- the session of the first tests
local buf_a

test(":AgentRewind reverts a run's files: the open buffer by an undoable edit, the created file deleted", function()
  vim.fn.writefile({ "one", "two" }, path("a.txt"))
  vim.fn.writefile({ "three" }, path("b.txt"))
  h.script({
    { content = "First answer." },
    {
      content = {
        { type = "toolCall", id = "e1", name = "edit",
          arguments = { path = "a.txt", edits = { { oldText = "two", newText = "TWO" } } } },
        { type = "toolCall", id = "e2", name = "edit",
          arguments = { path = "b.txt", edits = { { oldText = "three", newText = "THREE" } } } },
        { type = "toolCall", id = "w1", name = "write", arguments = { path = "c.txt", content = "created\n" } },
      },
      stopReason = "toolUse",
    },
    { content = "Changed the files." },
    { content = "Second answer." },
  })
  h.new_session()
  session = state.current
  vim.cmd.edit(path("a.txt"))
  buf_a = vim.api.nvim_get_current_buf()
  wait(5000, function()
    return vim.lsp.buf_is_attached(buf_a, client.id)
  end, "a.txt attached")
  settles(session, function()
    vim.cmd("AgentPrompt first")
  end)
  settles(session, function()
    vim.cmd("AgentPrompt change the files")
  end)
  expect(vim.deep_equal(lines(buf_a), { "one", "TWO" }), "the agent edited the buffer: " .. vim.inspect(lines(buf_a)))
  expect(vim.deep_equal(read("a.txt"), { "one", "TWO" }), "and saved it")
  expect(vim.deep_equal(read("b.txt"), { "THREE" }), "b.txt: " .. vim.inspect(read("b.txt")))
  expect(bytes("c.txt") == "created\n", "c.txt holds what the write tool wrote: " .. vim.inspect(bytes("c.txt")))

  h.notes = {}
  local asked = h.stub_select(choose("change the files"))
  after("AgentlsRewound", function()
    vim.cmd("AgentRewind")
  end)
  -- the questions: which message (newest first), revert the files (default yes), summarise (default no)
  expect(#asked == 3, "three questions: " .. vim.inspect(vim.tbl_map(function(q)
    return q.prompt
  end, asked)))
  expect(asked[1].items[1].text == "change the files" and asked[1].items[2].text == "first", "newest first")
  expect(asked[1].format(asked[1].items[1]):find("2. change the files", 1, true), asked[1].format(asked[1].items[1]))
  expect(asked[2].prompt:find("put back the files", 1, true) and asked[2].items[1].label == "Revert the files",
    "reverting is the default: " .. asked[2].prompt)
  expect(asked[3].items[1].label == "No summary", "no summary is the default")

  expect(vim.deep_equal(lines(buf_a), { "one", "two" }), "the buffer is back: " .. vim.inspect(lines(buf_a)))
  expect(not vim.bo[buf_a].modified and vim.deep_equal(read("a.txt"), { "one", "two" }), "and saved")
  expect(vim.deep_equal(read("b.txt"), { "three" }), "the closed file is back: " .. vim.inspect(read("b.txt")))
  expect(read("c.txt") == nil, "the created file is deleted")
  expect(h.noted("rewound to before message 2", vim.log.levels.INFO), "reported")
  expect(h.noted("c.txt deleted", vim.log.levels.INFO), "the report names the deleted file")
  local text = h.panel_text()
  expect(text:find("First answer.", 1, true) and not text:find("Changed the files.", 1, true), text)
  expect(not text:find("change the files", 1, true), "the prompt is gone from the panel:\n" .. text)

  -- the message's text is back in the prompt input
  wait(2000, function()
    return #prompt.windows() > 0
  end, "the prompt input")
  vim.cmd.stopinsert()
  expect(take_prompt() == "change the files", "the prompt input has the text: " .. take_prompt())

  -- u in the open buffer brings the agent's version back; redo puts the reverted one again
  vim.api.nvim_buf_call(buf_a, function()
    vim.cmd("silent undo")
  end)
  local undone = lines(buf_a)
  expect(vim.deep_equal(undone, { "one", "TWO" }), "u restores the agent's version: " .. vim.inspect(undone))
  vim.api.nvim_buf_call(buf_a, function()
    vim.cmd("silent redo")
  end)
  expect(vim.deep_equal(lines(buf_a), { "one", "two" }), "redo: " .. vim.inspect(lines(buf_a)))
end)

test("the next prompt continues from the entry before the rewound message", function()
  local win = prompt.windows()[1]
  expect(win, "the prompt input is open")
  vim.api.nvim_buf_set_lines(prompt.buf, 0, -1, false, { "change only a" })
  settles(session, function()
    keys_in(win, "<CR>")
  end)
  local messages = roles_and_texts(stored(session))
  local expected = { "user: first", "assistant: First answer.", "user: change only a", "assistant: Second answer." }
  expect(vim.deep_equal(messages, expected), "the branch: " .. vim.inspect(messages))
  local text = h.panel_text()
  expect(text:find("You\n  change only a\n", 1, true) and text:find("Second answer.", 1, true), text)
end)

test(":AgentTree shows both branches; F goes to the other one with its files, <CR> back without", function()
  after("AgentlsTree", function()
    vim.cmd("AgentTree")
  end)
  local buf = tree.view.buf
  local win = vim.fn.win_findbuf(buf)[1]
  expect(win and vim.api.nvim_get_current_win() == win, "the tree opened with the cursor in it")
  local shown = table.concat(lines(buf), "\n")
  expect(shown:find("Branches (2)", 1, true), shown)
  expect(shown:find("○ You: change the files", 1, true), "the branch left behind:\n" .. shown)
  expect(shown:find("● You: change only a", 1, true), "the current branch:\n" .. shown)
  expect(shown:find("● Assistant: Second answer.[^\n]*◀"), "the session's position is marked:\n" .. shown)
  expect(shown:find("  ├ ● You: change only a", 1, true) and shown:find("  ├ ○ You: change the files", 1, true),
    "the two branches are indented under the entry they part at:\n" .. shown)
  local cursor = vim.api.nvim_win_get_cursor(win)[1]
  expect(lines(buf)[cursor]:find("◀", 1, true), "the cursor is on the current position: " .. lines(buf)[cursor])

  -- F: the other branch, its files applied again
  vim.api.nvim_win_set_cursor(win, { row_of(buf, "Assistant: Changed the files."), 0 })
  h.notes = {}
  after("AgentlsSwitched", function()
    keys_in(win, "F")
  end)
  expect(vim.deep_equal(lines(buf_a), { "one", "TWO" }), "a.txt applied again: " .. vim.inspect(lines(buf_a)))
  expect(vim.deep_equal(read("b.txt"), { "THREE" }) and bytes("c.txt") == "created\n", "b and c too")
  expect(h.noted("switched branch", vim.log.levels.INFO), "reported")
  local text = h.panel_text()
  expect(text:find("Changed the files.", 1, true) and not text:find("Second answer.", 1, true), text)
  wait(5000, function()
    return table.concat(lines(buf), "\n"):find("● You: change the files", 1, true) ~= nil
  end, "the tree refreshed")

  -- <CR>: back to the first branch; the files stay as they are
  vim.api.nvim_win_set_cursor(win, { row_of(buf, "Assistant: Second answer."), 0 })
  after("AgentlsSwitched", function()
    keys_in(win, "<CR>")
  end)
  text = h.panel_text()
  expect(text:find("Second answer.", 1, true) and not text:find("Changed the files.", 1, true), text)
  expect(vim.deep_equal(lines(buf_a), { "one", "TWO" }), "a.txt untouched: " .. vim.inspect(lines(buf_a)))
  expect(bytes("c.txt") == "created\n", "c.txt untouched")
  local messages = roles_and_texts(stored(session))
  expect(messages[#messages] == "assistant: Second answer.", vim.inspect(messages))

  -- L labels an entry
  vim.api.nvim_win_set_cursor(win, { row_of(buf, "You: first"), 0 })
  h.stub_input("start")
  after("AgentlsTree", function()
    keys_in(win, "L")
  end)
  shown = table.concat(lines(buf), "\n")
  expect(shown:find("● You: first  #start", 1, true), "the label is shown:\n" .. shown)
  keys_in(win, "q")
  expect(#vim.fn.win_findbuf(buf) == 0, "q closes the tree")
end)

test(":AgentFork makes a new session before a message; the original keeps its transcript", function()
  local before = stored(session)
  h.stub_select(choose("change only a"))
  local forked = after("AgentlsForked", function()
    vim.cmd("AgentFork")
  end)
  expect(forked.from == session and forked.sessionId ~= session, vim.inspect(forked))
  expect(state.current == forked.sessionId, "the panel shows the fork")
  local messages = roles_and_texts(stored(forked.sessionId))
  expect(vim.deep_equal(messages, { "user: first", "assistant: First answer." }), vim.inspect(messages))
  expect(vim.deep_equal(stored(session), before), "the original is untouched")
  local text = h.panel_text()
  expect(text:find("First answer.", 1, true) and not text:find("Second answer.", 1, true), text)
  vim.cmd.stopinsert()
  expect(take_prompt() == "change only a", "the prompt input has the text: " .. take_prompt())
  prompt.close()

  -- agent/branch from elsewhere (a script, another editor): the panel reads the transcript again
  local branch = after("AgentlsBranch", function()
    client.request("agent/rewind", { sessionId = forked.sessionId, entryId = vim.NIL, files = false }, function() end)
  end)
  expect(branch.sessionId == forked.sessionId, vim.inspect(branch))
  expect(#state.transcripts[forked.sessionId].entries == 0, "the transcript is empty after rewinding to the start")
  expect(not h.panel_text():find("First answer.", 1, true), h.panel_text())
end)

test("a file changed since the agent's edit: R in the panel names it and reverts the others", function()
  vim.fn.writefile({ "dee" }, path("d.txt"))
  vim.fn.writefile({ "eee" }, path("e.txt"))
  h.script({
    {
      content = {
        { type = "toolCall", id = "d1", name = "edit",
          arguments = { path = "d.txt", edits = { { oldText = "dee", newText = "DEE" } } } },
        { type = "toolCall", id = "f1", name = "edit",
          arguments = { path = "e.txt", edits = { { oldText = "eee", newText = "EEE" } } } },
      },
      stopReason = "toolUse",
    },
    { content = "Edited d and e." },
  })
  h.new_session()
  local id = state.current
  settles(id, function()
    vim.cmd("AgentPrompt edit d and e")
  end)
  vim.fn.writefile({ "DEE by hand" }, path("d.txt")) -- the user changes it after the agent
  panel.open(true)
  local win = panel.windows()[1]
  vim.api.nvim_win_set_cursor(win, { row_of(panel.buf, "Edited d and e."), 0 }) -- on the answer: its prompt
  h.notes = {}
  local asked = h.stub_select(choose(nil, { 1, 1, 1 })) -- revert, no summary, then "revert the others"
  after("AgentlsRewound", function()
    keys_in(win, "R")
  end)
  expect(#asked == 3, "files, summary, then the conflict: " .. #asked)
  expect(asked[3].prompt:find("d.txt", 1, true) and asked[3].items[1].label:find("Revert the others", 1, true),
    asked[3].prompt)
  expect(h.noted("reverting would lose that: d.txt: ", vim.log.levels.WARN), "the conflict's reason is shown, on one line")
  expect(vim.deep_equal(read("d.txt"), { "DEE by hand" }), "the changed file is left alone")
  expect(vim.deep_equal(read("e.txt"), { "eee" }), "the other one is reverted")
  expect(h.noted("skipped: d.txt", vim.log.levels.WARN), "the report lists the skipped file")
  vim.cmd.stopinsert()
  expect(take_prompt() == "edit d and e", take_prompt())
  prompt.close()
end)

test(":AgentRewind! keeps the files, summarises the branch; the prompt's attachment goes too", function()
  h.script({
    h.tool_call("g1", "write", { path = "g.txt", content = "gee\n" }),
    { content = "Wrote g." },
    { content = "## Goal\nWrite g." }, -- the branch summary
  })
  h.new_session()
  local id = state.current
  settles(id, function()
    vim.cmd("AgentPrompt write g like @e.txt") -- with an attachment: an editorContext message first
  end)
  expect(bytes("g.txt") == "gee\n", vim.inspect(bytes("g.txt")))
  local roles = vim.tbl_map(function(m)
    return m.role
  end, stored(id))
  expect(roles[1] == "custom" and roles[2] == "user", vim.inspect(roles))
  h.notes = {}
  local asked = h.stub_select(choose("write g like @e.txt", { 2 })) -- "Summarise it"
  local result = after("AgentlsRewound", function()
    vim.cmd("AgentRewind!")
  end)
  expect(#asked == 2 and asked[2].prompt:find("summarise", 1, true), "which message, then the summary only")
  expect(bytes("g.txt") == "gee\n", "the file stays: " .. vim.inspect(bytes("g.txt")))
  expect(h.noted("files left as they are", vim.log.levels.INFO), "reported")
  expect(h.noted("the branch left behind is summarised", vim.log.levels.INFO), "the summary is reported")
  expect(type(result.summary) == "string" and result.summary:find("Write g.", 1, true), vim.inspect(result))
  local messages = roles_and_texts(stored(id))
  -- back before the first message (the attachment too), with the summary of what was left
  expect(#messages == 1 and messages[1]:find("^branchSummary"), vim.inspect(messages))
  expect(h.panel_text():find("Branch summary", 1, true), h.panel_text())
  vim.cmd.stopinsert()
  expect(take_prompt() == "write g like @e.txt", take_prompt())
  prompt.close()
end)

test("queued messages in the panel: K/J reorder, e edits, x removes", function()
  local id = h.slow_run({ { content = LONG } }, "talk", "All work", "the run streaming")
  vim.cmd("AgentFollowUp one")
  vim.cmd("AgentFollowUp two")
  h.wait_panel("▸ follow-up: one\n▸ follow-up: two", "both queued")
  panel.open(true)
  local win = panel.windows()[1]
  local function queue_texts()
    local queue = client.request_sync("agent/getQueue", { sessionId = id }, 5000)
    return vim.tbl_map(function(item)
      return item.text
    end, queue.followUp)
  end
  local function at(text)
    panel.render()
    vim.api.nvim_win_set_cursor(win, { row_of(panel.buf, "▸ follow-up: " .. text), 0 })
  end
  at("two")
  keys_in(win, "K")
  wait(5000, function()
    local moved = h.panel_text():find("▸ follow-up: two\n▸ follow-up: one", 1, true) ~= nil
    -- the cursor follows the moved item
    local row = vim.api.nvim_win_get_cursor(win)[1]
    return moved and panel.lines()[row]:find("follow-up: two", 1, true) ~= nil
  end, "two moved first, the cursor on it")
  expect(vim.deep_equal(queue_texts(), { "two", "one" }), vim.inspect(queue_texts()))
  at("one")
  keys_in(win, "e")
  vim.cmd.stopinsert()
  expect(take_prompt() == "one", "the prompt input has the item's text: " .. take_prompt())
  vim.api.nvim_buf_set_lines(prompt.buf, 0, -1, false, { "one, edited" })
  keys_in(prompt.windows()[1], "<CR>")
  wait(5000, function()
    return h.panel_text():find("▸ follow-up: two\n▸ follow-up: one, edited", 1, true) ~= nil
  end, "the item edited in its place")
  expect(vim.deep_equal(queue_texts(), { "two", "one, edited" }), vim.inspect(queue_texts()))
  win = panel.windows()[1]
  at("two")
  keys_in(win, "x")
  wait(5000, function()
    return not h.panel_text():find("follow-up: two", 1, true)
  end, "the item removed")
  expect(vim.deep_equal(queue_texts(), { "one, edited" }), vim.inspect(queue_texts()))
  client.request_sync("agent/clearQueue", { sessionId = id }, 5000)
  vim.cmd("AgentAbort")
  h.wait_settled(id)
end)

h.finish()
