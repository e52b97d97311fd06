-- agentls: user commands. The plugin's modules load on first use.
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify("agentls needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

--- `fn`, after the plugin's setup (`setup({})` unless the user called it).
local function setup_and(fn)
  return function(args)
    require("agentls").ensure_setup()
    fn(args)
  end
end

--- A user command that runs `fn(args)` after the setup.
local function user_command(name, fn, opts)
  vim.api.nvim_create_user_command(name, setup_and(fn), opts)
end

--- `:name [text]`: `commands[action](text)`.
local function command(name, action, opts)
  user_command(name, function(args)
    require("agentls.commands")[action](args.args)
  end, opts)
end

local function complete_prompt(lead, line, pos)
  return require("agentls.complete").command_line(lead, line, pos)
end

command("AgentPrompt", "prompt", {
  nargs = "*",
  desc = "agentls: send a prompt, or run !command (asks for it without text)",
  complete = complete_prompt,
})
command("AgentSteer", "steer", { nargs = "*", desc = "agentls: steer the running agent", complete = complete_prompt })
command("AgentFollowUp", "follow_up", {
  nargs = "*",
  desc = "agentls: queue a follow-up message",
  complete = complete_prompt,
})
command("AgentAbort", "abort", { nargs = 0, desc = "agentls: abort the run and the running command" })
command("AgentCompact", "compact", { nargs = "*", desc = "agentls: compact the session's context (summarise it)" })
command("AgentContinue", "continue", { nargs = 0, desc = "agentls: continue the session" })
command("AgentNewSession", "new_session", { nargs = 0, desc = "agentls: start a new session" })
command("AgentSessions", "sessions", { nargs = 0, desc = "agentls: pick a stored session" })
command("AgentAttach", "attach", {
  nargs = "?",
  desc = "agentls: show a session and follow it (a live one of the per-user server streams on); pick one without",
  complete = function(lead)
    return require("agentls.commands").complete_sessions(lead)
  end,
})
command("AgentDetach", "detach", {
  nargs = 0,
  desc = "agentls: stop following the current session (its run goes on in the per-user server)",
})
command("AgentAccept", "accept", { nargs = 0, desc = "agentls: accept the change under review" })
command("AgentReject", "reject", {
  nargs = "*",
  desc = "agentls: reject the change under review (the reason goes to the model)",
})
command("AgentReview", "review", { nargs = 0, desc = "agentls: show the change waiting for review again" })
command("AgentAcceptHunk", "accept_hunk", {
  nargs = 0,
  desc = "agentls: in the review tab, accept the hunk under the cursor",
})
command("AgentRejectHunk", "reject_hunk", {
  nargs = 0,
  desc = "agentls: in the review tab, reject the hunk under the cursor (its old lines come back)",
})
command("AgentChanges", "changes", {
  nargs = "?",
  desc = "agentls: the files and hunks of the last run (all: of the whole session) in the quickfix list",
  complete = function(lead)
    return ("all"):find(lead, 1, true) == 1 and { "all" } or {}
  end,
})
command("AgentChangesDiff", "changes_diff", {
  nargs = 0,
  desc = "agentls: the file of the change under the cursor beside its text before the change (a diff tab)",
})
command("AgentPanel", "panel", {
  nargs = 0,
  desc = "agentls: open or enter the transcript panel (q in it closes it)",
})
command("AgentThinking", "thinking", {
  nargs = "?",
  desc = "agentls: set the session's thinking level (pick one without an argument)",
  complete = function(lead)
    return vim.tbl_filter(function(level)
      return level:find(lead, 1, true) == 1
    end, require("agentls.commands").thinking_levels)
  end,
})
command("AgentMode", "mode", {
  nargs = "?",
  desc = "agentls: set the session's permission preset: ask, acceptEdits, plan, bypass (pick one without)",
  complete = function(lead)
    return vim.tbl_filter(function(id)
      return id:find(lead, 1, true) == 1
    end, require("agentls.commands").presets())
  end,
})
command("AgentBudget", "budget", {
  nargs = "*",
  desc = "agentls: the session's budget: LIMIT=N or LIMIT=off (max_cost_usd, max_turns, max_tokens, session.*), off; "
    .. "shows it without arguments",
  complete = function(lead, line)
    return require("agentls.commands").complete_budget(lead, line)
  end,
})
command("AgentStats", "stats", { nargs = 0, desc = "agentls: the session's tokens, cost and context size" })
command("AgentRename", "rename", {
  nargs = "*",
  desc = "agentls: name the current session (shown by :AgentSessions); no name clears it",
})
command("AgentDeleteSession", "delete_session", { nargs = 0, desc = "agentls: pick a stored session and delete it" })
command("AgentPermissions", "permissions", {
  nargs = 0,
  desc = 'agentls: list the workspace\'s "allow always" rules; pick one to revoke it',
})
command("AgentModel", "model", {
  nargs = "?",
  desc = "agentls: set the session's model (provider/id)",
  complete = function(lead)
    return require("agentls.complete").model(lead)
  end,
})

-- the session tree: rewind, fork, branches; the queue
user_command("AgentRewind", function(args)
  require("agentls.tree").rewind({ keep_files = args.bang })
end, {
  nargs = 0,
  bang = true,
  desc = "agentls: undo a prompt and what followed (pick it; ! keeps the files as they are)",
})
user_command("AgentFork", function()
  require("agentls.tree").fork()
end, { nargs = 0, desc = "agentls: a new session with the history up to before a message (pick it)" })
user_command("AgentTree", function()
  require("agentls.tree").open()
end, { nargs = 0, desc = "agentls: the session's tree of branches; <CR> goes to one" })
user_command("AgentMcp", function(args)
  require("agentls.mcp").command(args.args)
end, {
  nargs = "*",
  desc = "agentls: the session's MCP servers (R restarts, L opens the log); restart NAME, log NAME",
  complete = function(lead, line)
    return require("agentls.mcp").complete(lead, line)
  end,
})
user_command("AgentQueue", function()
  require("agentls.queue").pick()
end, { nargs = 0, desc = "agentls: edit, move or remove a queued message (pick it)" })

-- editor context: attachments of the next message
--- `:name`: `commands[action](args)` (the range, the bang, the path).
local function context_command(name, action, opts)
  user_command(name, function(args)
    require("agentls.commands")[action](args)
  end, opts)
end

context_command("AgentAddSelection", "add_selection", {
  range = true,
  desc = "agentls: attach the selected lines (or the visual selection) to the next message",
})
context_command("AgentAddFile", "add_file", {
  nargs = "?",
  complete = "file",
  desc = "agentls: attach a file (the current one without a path) to the next message",
})
context_command("AgentAddDiagnostics", "add_diagnostics", {
  nargs = 0,
  bang = true,
  desc = "agentls: attach the current buffer's diagnostics (! every buffer's) to the next message",
})
context_command("AgentClearContext", "clear_context", {
  nargs = 0,
  desc = "agentls: remove the attachments waiting for the next message",
})

-- <Plug> mappings, to map as you like: vim.keymap.set("n", "<leader>ap", "<Plug>(agentls-prompt)")
local plugs = {
  prompt = { "prompt", "write a prompt" },
  steer = { "steer", "steer the running agent" },
  ["follow-up"] = { "follow_up", "queue a follow-up" },
  abort = { "abort", "abort the run" },
  panel = { "panel", "open or enter the panel" },
  continue = { "continue", "continue the session" },
  model = { "model", "pick a model" },
  thinking = { "thinking", "pick a thinking level" },
  mode = { "cycle_mode", "the next permission preset" },
  sessions = { "sessions", "pick a stored session" },
  attach = { "attach", "attach to a live session" },
  rewind = { "rewind", "undo a prompt and what followed" },
  fork = { "fork", "fork a new session before a message" },
  tree = { "tree", "show the session's tree of branches" },
  changes = { "changes", "list the last run's changes" },
}
for name, spec in pairs(plugs) do
  vim.keymap.set("n", ("<Plug>(agentls-%s)"):format(name), setup_and(function()
    require("agentls.commands")[spec[1]]("")
  end), { desc = "agentls: " .. spec[2] })
end
vim.keymap.set("x", "<Plug>(agentls-add-selection)", ":AgentAddSelection<CR>", {
  silent = true,
  desc = "agentls: attach the selection to the next message",
})
