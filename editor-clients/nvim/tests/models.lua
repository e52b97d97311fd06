-- End-to-end tests of a session's model and figures in the Neovim plugin: :AgentModel (the
-- picker, a wrong name, the current model marked), the winbar's tokens and context,
-- :AgentThinking and :AgentStats, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/models.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
h.start()
local panel = require("agentls.panel")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

test(":AgentModel picks a model through vim.ui.select", function()
  h.new_session()
  local asked = h.stub_select(function(items)
    return items[1]
  end)
  h.notes = {}
  vim.cmd("AgentModel")
  wait(5000, function()
    return h.noted("model: faux/faux-1")
  end, "the model set")
  expect(#asked == 1 and asked[1].items[1].provider == "faux", "offered the server's models")
end)

test("the winbar shows tokens, cost and context; :AgentThinking and :AgentStats", function()
  h.settled_run({ { content = "Counted." } }, "count")
  local t = state.current_transcript()
  wait(5000, function()
    return t.stats ~= nil and t.stats.tokens.total > 0
  end, "agent/getStats read after the run: " .. vim.inspect(t.stats))
  -- a panel of 120 columns has room for every figure (panel.lua tests narrower ones)
  local winbar = require("agentls.render").winbar(t, {}, 120)
  expect(winbar:find("[%d.]+k? tokens") and winbar:find("context [%d]+%%%% of "), winbar)
  h.notes = {}
  vim.cmd("AgentThinking high")
  wait(5000, function()
    return h.noted("thinking: ")
  end, "the thinking level set")
  vim.cmd("AgentThinking loud")
  expect(h.noted("thinking level must be one of off, minimal", vim.log.levels.ERROR), "a bad level is refused")
  vim.cmd("AgentStats")
  wait(5000, function()
    return h.noted("tokens (input ")
  end, ":AgentStats")
  local levels = vim.fn.getcompletion("AgentThinking h", "cmdline")
  expect(vim.deep_equal(levels, { "high" }), vim.inspect(levels))
end)

test(":AgentModel checks the name and marks the current model", function()
  h.notes = {}
  vim.cmd("AgentModel faux/nope")
  wait(5000, function()
    return h.noted("unknown model faux/nope; the models are: faux/faux-1", vim.log.levels.ERROR)
  end, "the unknown model refused")
  local asked = h.stub_select(function()
    return nil
  end)
  vim.cmd("AgentModel")
  wait(5000, function()
    return #asked == 1
  end, "the picker")
  expect(asked[1].format(asked[1].items[1]):find("(current)", 1, true), asked[1].format(asked[1].items[1]))
end)

h.finish()
