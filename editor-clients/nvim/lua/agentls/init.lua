--- agentls for Neovim: a coding agent behind `agentls serve`, driven through Neovim's LSP client.
---
---   require("agentls").setup({ cmd = { "agentls", "serve" }, model = "anthropic/claude-sonnet-4-5" })
---
--- See :help agentls and editor-clients/nvim/README.md.
local M = {}

local configured = false

--- Configure the plugin. Safe to call again: a running server keeps its options until it restarts.
---@param opts agentls.Config|table|nil
function M.setup(opts)
  local config = require("agentls.config")
  local notify = require("agentls.util").notify
  local ok, err, warnings = config.set(opts)
  if not ok then
    notify("setup: " .. err, vim.log.levels.ERROR)
    return
  end
  for _, warning in ipairs(warnings) do
    notify("setup: " .. warning, vim.log.levels.WARN)
  end
  configured = true
  local panel = require("agentls.panel")
  panel.define_highlights()
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup("agentls.highlights", { clear = true }),
    callback = panel.define_highlights,
  })
  require("agentls.progress").setup()
  local resize = vim.api.nvim_create_augroup("agentls.resize", { clear = true })
  vim.api.nvim_create_autocmd("VimResized", {
    group = resize,
    callback = function()
      panel.resize()
    end,
  })
  -- the winbars fit their windows' widths: again when those change
  vim.api.nvim_create_autocmd({ "VimResized", "WinResized" }, {
    group = resize,
    callback = function()
      panel.refresh_winbars()
      require("agentls.prompt").refresh_winbar()
      require("agentls.review").refresh_winbars()
    end,
  })
  M.ensure_helptags()
end

--- `:help agentls` without a plugin manager that runs :helptags: generate doc/tags when it is
--- missing or older than doc/agentls.txt (and the folder is writable).
function M.ensure_helptags()
  local source = debug.getinfo(1, "S").source:sub(2)
  local root = vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(source, ":p")))))
  local doc = root .. "/doc"
  local help, tags = vim.uv.fs_stat(doc .. "/agentls.txt"), vim.uv.fs_stat(doc .. "/tags")
  if help and (not tags or tags.mtime.sec < help.mtime.sec) and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
  end
end

--- Setup with the defaults, for commands run before (or without) setup().
function M.ensure_setup()
  if not configured then
    M.setup({})
  end
end

function M.is_configured()
  return configured
end

--- For statuslines: the agent's running tools and the current session's state, e.g.
--- "agentls: running · bash: pytest -q"; "" when there is nothing to say.
function M.status()
  local t = require("agentls.state").current_transcript()
  local tools = require("agentls.progress").status()
  local reviews = #require("agentls.review").queue
  local waiting = reviews > 0 and (" · %d review%s waiting"):format(reviews, reviews > 1 and "s" or "") or ""
  if not t or (t.status == "idle" and tools == "" and waiting == "") then
    return ""
  end
  return "agentls: " .. t.status .. (tools ~= "" and (" · " .. tools) or "") .. waiting
end

M.prompt = function(text)
  require("agentls.commands").prompt(text)
end
M.steer = function(text)
  require("agentls.commands").steer(text)
end
M.follow_up = function(text)
  require("agentls.commands").follow_up(text)
end
M.abort = function()
  require("agentls.commands").abort()
end
--- The changes of the last run (`all`: of the whole session) in the quickfix list (:AgentChanges).
M.changes = function(all)
  require("agentls.commands").changes(all and "all" or "")
end
--- The change under the cursor (or of the current buffer's file) in a diff tab (:AgentChangesDiff).
M.changes_diff = function()
  require("agentls.commands").changes_diff()
end
--- In the review tab: accept / reject the hunk under the cursor (:AgentAcceptHunk, :AgentRejectHunk).
M.accept_hunk = function()
  require("agentls.commands").accept_hunk()
end
M.reject_hunk = function()
  require("agentls.commands").reject_hunk()
end

return M
