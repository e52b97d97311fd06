-- End-to-end tests of permission questions in the Neovim plugin: asked through a
-- vim.ui.select picker (allowed, rejected, cancelled, a spoofing command written out) and in
-- the panel (its keys, :AgentPermissions), with the tool's row and progress, against the real
-- server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/permissions.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local panel = require("agentls.panel")
local permissions = require("agentls.permissions")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect
local panel_keys = h.panel_keys

test("a tool row goes running -> done, with progress and a permission asked through vim.ui.select", function()
  h.script({
    h.tool_call("t1", "bash", { command = "sleep 0.5; echo tool-output" }),
    { content = "Ran it." },
  })
  h.new_session()
  local asked = h.stub_select("allowOnce")
  local progress = h.record_progress()
  vim.cmd("AgentPrompt run the command")
  local seen_running = false
  wait(10000, function()
    local text = h.panel_text()
    seen_running = seen_running or text:find("bash  sleep 0.5; echo tool-output  · running", 1, true) ~= nil
    return text:find("bash  sleep 0.5; echo tool-output  · done", 1, true) ~= nil
  end, "the tool row done")
  expect(seen_running, "the tool row showed running first")
  h.wait_settled(state.current)
  local text = h.panel_text()
  expect(text:find("│ tool-output", 1, true), "the row shows the output:\n" .. text)
  expect(text:find("Ran it.", 1, true), "the final answer follows")
  expect(#asked == 1 and asked[1].prompt:find("Run the command: sleep 0.5", 1, true), "asked once, naming the command")
  expect(asked[1].items[1].label == "Allow once", "offered the server's options")
  wait(2000, function()
    return #progress >= 2
  end, "LspProgress begin and end")
  local begin = progress[1]
  expect(begin.kind == "begin" and begin.title == "bash: sleep 0.5; echo tool-output", "progress begins with the title")
  expect(progress[#progress].kind == "end", "progress ends")
end)

test("a permission refused through vim.ui.select (or cancelled) fails the tool", function()
  h.script({
    h.tool_call("r1", "bash", { command = "echo rejected > out.txt" }),
    h.tool_call("r2", "bash", { command = "echo cancelled > out.txt" }),
    { content = "Fine." },
  })
  h.new_session()
  local answers = { "reject", false }
  local asked = h.stub_select(function()
    return table.remove(answers, 1)
  end)
  vim.cmd("AgentPrompt try")
  h.wait_settled(state.current)
  local text = h.panel_text()
  expect(#asked == 2, "asked twice, got " .. #asked)
  expect(text:find("echo rejected > out.txt  · failed", 1, true), "the rejected row failed:\n" .. text)
  expect(text:find("echo cancelled > out.txt  · failed", 1, true), "the cancelled row failed:\n" .. text)
  expect(text:find("The user rejected the bash call", 1, true), "the row says why")
  expect(vim.fn.filereadable(env.ws .. "/out.txt") == 0, "nothing ran")
end)

test("a question shows a spoofing command's control characters written out, in the picker and the notification", function()
  local spoof = "touch PWNED #\r\27[2K\27[1A\226\128\174Run the command: ls -la\nrm -rf ~"
  local shown = [[touch PWNED #\r\x1b[2K\x1b[1A\u202eRun the command: ls -la\nrm -rf ~]]
  h.script({ h.tool_call("s1", "bash", { command = spoof }), h.tool_call("s2", "bash", { command = spoof }), { content = "No." } })
  h.new_session()
  local asked = h.stub_select("reject")
  h.notes = {}
  vim.cmd("AgentPrompt spoof")
  wait(10000, function()
    return #asked == 1
  end, "the picker asked")
  vim.ui.select = h.original_select -- the stock picker: the panel asks, and a notification says so
  local id
  wait(10000, function()
    id = require("agentls.permissions").only_pending()
    return id ~= nil
  end, "the second question waits in the panel")
  panel.render()
  local text = h.panel_text()
  require("agentls.permissions").answer(id, "reject")
  h.wait_settled(state.current)
  expect(asked[1].prompt == "agentls: Run the command: " .. shown, "the picker's prompt: " .. vim.inspect(asked[1].prompt))
  expect(h.noted("agentls: Run the command: " .. shown, vim.log.levels.WARN), "the notification: " .. vim.inspect(h.notes))
  for _, note in ipairs(h.notes) do
    expect(not note.message:find("[\r\27]") and not note.message:find("\226\128\174", 1, true), "nothing raw: " .. vim.inspect(note.message))
  end
  expect(text:find("bash  " .. shown:sub(1, 59), 1, true), "the row shows the command written out:\n" .. text)
  expect(vim.fn.filereadable(env.ws .. "/PWNED") == 0, "nothing ran")
end)

test("permissions in the panel: the row waits, a allows once, r rejects, A always; :AgentPermissions revokes", function()
  expect(permissions.in_panel(), "the stock vim.ui.select: the panel asks")
  h.script({
    h.tool_call("p1", "bash", { command = "echo once > inline.txt" }),
    h.tool_call("p2", "bash", { command = "echo no > inline.txt" }),
    h.tool_call("p3", "bash", { command = "echo always >> inline.txt" }),
    { content = "Asked thrice." },
  })
  h.new_session()
  local session = state.current
  h.notes = {}
  vim.cmd("AgentPrompt ask me")
  local function waiting(command)
    wait(10000, function()
      panel.render()
      return h.panel_text():find(command .. "  · waiting for permission\n    waiting for you: a allow once · A always · r reject", 1, true) ~= nil
    end, "the row of " .. command .. " waiting, with the keys")
  end
  waiting("echo once > inline.txt")
  expect(h.noted("Run the command: echo once", vim.log.levels.WARN), "a notification says a question waits")
  panel_keys("echo once > inline.txt", "a")
  waiting("echo no > inline.txt")
  panel_keys("waiting for you", "r")
  waiting("echo always >> inline.txt")
  panel_keys("echo always >> inline.txt", "A")
  h.wait_settled(session)
  local text = h.panel_text()
  expect(text:find("echo once > inline.txt  · done", 1, true), text)
  expect(text:find("echo no > inline.txt  · failed", 1, true), text)
  expect(text:find("echo always >> inline.txt  · done", 1, true), text)
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/inline.txt"), { "once", "always" }), "ran the allowed ones")
  expect(next(permissions.pending) == nil, "no question left")

  local asked = h.stub_select(function(items)
    for _, rule in ipairs(items) do
      if rule.toolName == "bash" then
        return rule
      end
    end
  end)
  h.notes = {}
  vim.cmd("AgentPermissions")
  wait(5000, function()
    return h.noted("revoked: bash asks again")
  end, "the rule revoked")
  expect(#asked == 1 and asked[1].format(asked[1].items[1]):find("bash", 1, true), "listed the rule")
  vim.ui.select = h.original_select
  vim.cmd("AgentPermissions")
  wait(5000, function()
    return h.noted('no "allow always" rules')
  end, "no rule left")
end)

test("permission presets: m in the panel cycles them, the winbar names the preset, :AgentMode sets one", function()
  h.script({ h.tool_call("b1", "bash", { command = "echo bypassed" }), { content = "Ran it." } })
  local session = h.new_session()
  panel.open(false)
  local function winbar()
    panel.render()
    return vim.wo[panel.windows()[1]].winbar
  end
  wait(5000, function()
    return state.transcripts[session].permission_preset == "acceptEdits" and winbar():find("Accept edits", 1, true) ~= nil
  end, "the winbar naming the default preset")
  panel_keys("", "m")
  wait(5000, function()
    return state.transcripts[session].permission_preset == "plan" and winbar():find("Read-only", 1, true) ~= nil
  end, "m: the next preset, plan (Read-only): " .. winbar())
  expect(h.noted("permissions: Read-only (Only reading"), vim.inspect(h.notes[#h.notes]))
  expect(vim.deep_equal(vim.fn.getcompletion("AgentMode a", "cmdline"), { "ask", "acceptEdits" }),
    vim.inspect(vim.fn.getcompletion("AgentMode a", "cmdline")))
  vim.cmd("AgentMode nosuch")
  wait(5000, function()
    return h.noted("acceptEdits", vim.log.levels.ERROR)
  end, "an unknown preset refused, naming the presets")
  vim.cmd("AgentMode bypass")
  wait(5000, function()
    return winbar():find("Bypass permissions", 1, true) ~= nil
  end, "the winbar naming bypass")
  local asked = h.stub_select("reject")
  h.settles(session, function()
    vim.cmd("AgentPrompt run it")
  end)
  expect(#asked == 0, "bypass: bash asks nothing")
  expect(h.tool_results(session).b1.text:find("bypassed", 1, true), vim.inspect(h.tool_results(session)))
  panel_keys("", "m")
  wait(5000, function()
    return state.transcripts[session].permission_preset == "ask"
  end, "m after bypass wraps to ask")
end)

test("with a picker, the row shows the wait before vim.ui.select asks", function()
  h.script({ h.tool_call("q1", "bash", { command = "echo picked" }), { content = "Ok." } })
  h.new_session()
  local seen
  h.stub_select(function(items)
    seen = h.panel_text()
    return items[1]
  end)
  expect(not permissions.in_panel(), "a picker: vim.ui.select asks too")
  vim.cmd("AgentPrompt pick")
  h.wait_settled(state.current)
  expect(seen and seen:find("echo picked  · waiting for permission", 1, true), "the panel when asked:\n" .. tostring(seen))
end)

h.finish()
