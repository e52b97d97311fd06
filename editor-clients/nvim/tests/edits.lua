-- End-to-end tests of the agent's edits of open buffers in the Neovim plugin: an edit over
-- the user's unsaved text (undoable, unsaved) and workspace/applyEdit's refusal of an edit for
-- an older buffer version, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/edits.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local client = require("agentls.client")
local edits = require("agentls.edits")

local test, wait, expect = h.test, h.wait, h.expect

test("an edit over the user's unsaved text lands in the buffer only, unsaved, and u undoes it", function()
  h.running_server()
  vim.fn.writefile({ "alpha", "beta" }, env.ws .. "/a.txt")
  vim.cmd.edit(env.ws .. "/a.txt")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "beta unsaved" }) -- only the buffer has this line
  vim.cmd("let &g:undolevels = &g:undolevels") -- close the undo block, as typing would
  wait(2000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, "the buffer attached")
  h.settled_run({
    h.tool_call("e1", "edit", { path = "a.txt", edits = { { oldText = "beta unsaved", newText = "gamma" } } }),
    { content = "Edited." },
  }, "edit a.txt")
  local text = h.panel_text()
  expect(text:find("edit  a.txt  · done", 1, true), "the edit row is done:\n" .. text)
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "alpha", "gamma" }), "the buffer has the edit")
  -- The edit replaced the user's unsaved line: saving would write what the user never saved.
  expect(vim.bo[buf].modified, "the buffer is not saved")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/a.txt"), { "alpha", "beta" }), "the disk is as the user left it")
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("silent undo")
  end)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  expect(vim.deep_equal(lines, { "alpha", "beta unsaved" }), "u restores the buffer: " .. vim.inspect(lines))
  vim.cmd("silent write!")
end)

test("workspace/applyEdit refuses an edit made for an older buffer version", function()
  local buf = vim.fn.bufnr(env.ws .. "/a.txt")
  local uri = vim.uri_from_bufnr(buf)
  local version = vim.lsp.util.buf_versions[buf]
  local handler = client.get().handlers["workspace/applyEdit"]
  local function edit(v)
    return {
      label = "test",
      edit = {
        documentChanges = {
          {
            textDocument = { uri = uri, version = v },
            edits = {
              {
                range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 5 } },
                newText = "ALPHA",
              },
            },
          },
        },
      },
    }
  end
  local ctx = { client_id = client.id, method = "workspace/applyEdit" }
  vim.cmd("let &g:undolevels = &g:undolevels")
  local stale = handler(nil, edit(version - 1), ctx)
  expect(stale.applied == false and stale.failureReason:find("changed in the editor", 1, true), vim.inspect(stale))
  expect(vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "alpha", "the stale edit was not applied")
  local elsewhere = { uri = vim.uri_from_fname(env.ws .. "/none.txt"), version = 1 }
  local closed = edits.refusal({ documentChanges = { { textDocument = elsewhere, edits = {} } } })
  expect(closed and closed:find("not open", 1, true), "an edit of a closed document is refused: " .. tostring(closed))
  local current = handler(nil, edit(version), ctx)
  expect(current.applied == true, vim.inspect(current))
  expect(vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "ALPHA", "the current edit was applied")
  vim.cmd("silent buffer " .. buf .. " | silent undo | silent write!")
end)

h.finish()
