--- `agent/requestPermission`: ask the user, in the panel (keys on the tool's row: `a` allow
--- once, `A` always, `S` always for every tool of an MCP tool's server, `r` reject; the
--- project trust question has a row of its own, `A` trusts, `r` rejects) and with
--- `vim.ui.select` (not with `permission_prompt = "panel"`, nor with "auto", the default,
--- while `vim.ui.select` is Neovim's blocking list).
---
--- Neovim runs server→client request handlers in a coroutine, so the handler yields
--- until the user has answered (whichever way comes first) and the answer goes back as the
--- request's result; the editor keeps running meanwhile. No choice (the user cancels the
--- picker) is a rejection. The tool's row shows "waiting for permission" before the picker
--- opens, so a blocking picker does not hide what it asks about.
local util = require("agentls.util")

local M = {}

M.default_options = {
  { id = "allowOnce", label = "Allow once" },
  { id = "allowAlways", label = "Allow always" },
  { id = "reject", label = "Reject" },
}

--- The question's kind: "tool" (may this call run?), "sandbox" (run a call the sandbox denied
--- once outside it?) or "budget" (go on though the run reached its budget?).
function M.kind(params)
  local kind = type(params) == "table" and params.kind or nil
  return (kind == "sandbox" or kind == "budget") and kind or "tool"
end

--- The outcomes that say yes to a question of each kind (the panel's allow key answers them).
M.ALLOWING = { tool = "allowOnce", sandbox = "runUnsandboxed", budget = "raiseBudget" }

--- The option of `params` whose id is `id` (from the request), if offered.
function M.option(params, id)
  for _, option in ipairs(type(params) == "table" and type(params.options) == "table" and params.options or {}) do
    if type(option) == "table" and option.id == id then
      return option
    end
  end
  return nil
end

--- The sandbox question's parts: the command and the lines of what the sandbox may have
--- denied (from its title, after "Run it once outside the sandbox?"), written out on one line each.
function M.sandbox_parts(params)
  local args = type(params.args) == "table" and params.args or {}
  local command = util.visible(type(args.command) == "string" and args.command or "?", true)
  local title = type(params.title) == "string" and params.title or ""
  local marker = "Run it once outside the sandbox?"
  local at = title:find(marker, 1, true)
  local note = {}
  if at then
    for line in title:sub(at + #marker):gmatch("[^\n]+") do
      if vim.trim(line) ~= "" then
        note[#note + 1] = util.visible(line, true)
      end
    end
  end
  return command, note
end

--- The budget question's detail: "limit: 2 turns (this run) · used: 2 turns".
function M.budget_detail(params)
  local transcript = require("agentls.transcript")
  local usage = transcript.budget_usage(params.budget) or transcript.budget_usage(params.args)
  if not usage then
    return nil
  end
  return ("limit: %s (%s) · used: %s"):format(transcript.budget_amount(usage.kind, usage.limit),
    usage.scope == "session" and "the session" or "this run", transcript.budget_amount(usage.kind, usage.used))
end

--- The questions waiting, by toolCallId: {params, resolve = fun(outcome), done, order}.
---@type table<string, table>
M.pending = {}
local asked = 0 -- questions asked so far: their order

--- Whether `params` is the project trust question (a folder's files, its `.mcp.json` servers).
function M.is_trust(params)
  return type(params) == "table" and params.toolName == "mcp"
end

--- Whether the question has no tool row (the trust question; the budget question, whose
--- toolCallId is the run's id): the panel shows it in a row of its own.
function M.has_own_row(params)
  return M.is_trust(params) or M.kind(params) == "budget"
end

--- The questions of `session_id` with rows of their own (trust, budget) waiting, oldest first:
--- {id, params}.
function M.trust_questions(session_id)
  local questions = {}
  for id, question in pairs(M.pending) do
    if M.has_own_row(question.params) and question.params.sessionId == session_id then
      questions[#questions + 1] = { id = id, params = question.params, order = question.order }
    end
  end
  table.sort(questions, function(a, b)
    return a.order < b.order
  end)
  return questions
end

--- The question's title with the call's details, on one line with its control characters written
--- out (a message obeys a `\r`: a command could hide behind one). The trust question of a
--- project's MCP servers (`toolName` "mcp") says what trusting does.
local function prompt(params)
  local title = util.visible(params.title or ("Allow the %s tool?"):format(params.toolName or "?"), true)
  if params.toolName == "mcp" then
    return ("agentls: %s (trusted for this folder until the commands change; :AgentMcp lists them)"):format(title)
  end
  local kind = M.kind(params)
  if kind == "sandbox" then
    local command, note = M.sandbox_parts(params)
    local denied = #note > 0 and (" · " .. table.concat(note, " · ")) or ""
    return ("agentls: run it once OUTSIDE the sandbox, unconfined? The sandbox denied: %s%s"):format(command, denied)
  elseif kind == "budget" then
    local detail = M.budget_detail(params)
    return ("agentls: %s%s"):format(title, detail and (" (" .. detail .. ")") or "")
  end
  return ("agentls: %s"):format(title)
end

--- The notification of a question asked in the panel, one line: what is asked, the panel's
--- row that answers it and its keys (`hint`). The trust question names the folder only: its
--- row in the panel says what the servers run.
function M.panel_notice(params, hint)
  if M.is_trust(params) then
    local folder = type(params.args) == "table" and type(params.args.folder) == "string" and params.args.folder or "?"
    return ("agentls: trust %s? The panel's trust row says what it runs; %s"):format(util.visible(folder, true), hint)
  end
  local row = M.kind(params) == "budget" and "budget row" or "tool row"
  return ("%s (the panel's %s, %s)"):format(prompt(params), row, hint)
end

--- An answer as a picker lists it.
local function label(option)
  return util.visible(option.label or option.id, true)
end

--- The tool call id of the only question waiting, if exactly one waits.
function M.only_pending()
  local ids = vim.tbl_keys(M.pending)
  return #ids == 1 and ids[1] or nil
end

--- Answer the question of tool call `id` (from the panel): true if one was waiting. The allow
--- key's "allowOnce" answers a sandbox or budget question with its yes (runUnsandboxed,
--- raiseBudget).
function M.answer(id, outcome)
  local question = M.pending[id]
  if not question then
    return false
  end
  local yes = M.ALLOWING[M.kind(question.params)]
  if outcome == "allowOnce" and yes ~= "allowOnce" and M.option(question.params, yes) then
    outcome = yes
  end
  question.resolve(outcome)
  return true
end

--- The tool ended, its session settled or the server went: its question is no longer asked.
function M.drop(id)
  local question = M.pending[id]
  if question then
    question.resolve("reject")
  end
end

--- A run of `session_id` settled: its tools' questions are no longer asked. A trust question
--- stays: it is about the folder, and the next prompt waits for its answer.
function M.drop_run(session_id)
  for id, question in pairs(M.pending) do
    if question.params.sessionId == session_id and not M.is_trust(question.params) then
      M.drop(id)
    end
  end
end

--- The client detached from `session_id`: none of its questions is asked here any more (the
--- server withdraws them).
function M.drop_session(session_id)
  for id, question in pairs(M.pending) do
    if question.params.sessionId == session_id then
      M.drop(id)
    end
  end
end

--- `$/cancelRequest` of the server's request `id`: its question was answered in another
--- client attached to the session (or withdrawn): it is no longer asked here. True if it was
--- one of the questions waiting.
function M.on_cancel(id)
  for _, question in pairs(M.pending) do
    if id ~= nil and question.request_id == id then
      question.resolve("reject") -- the server takes no answer to a request it cancelled
      local kind = M.kind(question.params)
      local what = M.is_trust(question.params) and "trust" or kind ~= "tool" and kind
        or util.visible(question.params.toolName or "?", true)
      util.notify(("the %s question was withdrawn: answered in another client, or its call ended"):format(what))
      return true
    end
  end
  return false
end

--- The server stopped: no question is asked any more.
function M.drop_all()
  for id in pairs(M.pending) do
    M.drop(id)
  end
end

--- Whether `vim.ui.select` is Neovim's own (a blocking list in the command line).
function M.stock_select()
  local ok, info = pcall(debug.getinfo, vim.ui.select, "S")
  return ok and type(info) == "table" and type(info.source) == "string" and info.source:find("vim/ui.lua", 1, true) ~= nil
end

--- Whether permissions are asked in the panel only: `permission_prompt = "panel"`, or "auto"
--- with the stock `vim.ui.select`.
function M.in_panel()
  local mode = require("agentls.config").options.permission_prompt
  return mode == "panel" or (mode == "auto" and M.stock_select())
end

---@param params table agent/requestPermission params
---@return {outcome: string}
function M.ask(params)
  local state = require("agentls.state")
  local panel = require("agentls.panel")
  local config = require("agentls.config")
  local transcript = state.transcripts[params.sessionId]
  if transcript then
    transcript:set_tool_asking(params.toolCallId, true)
    -- show the waiting row now: a blocking picker would keep the redraw from happening
    if params.sessionId == state.current then
      panel.render()
      pcall(vim.cmd.redraw)
    end
  end
  local options = params.options
  if type(options) ~= "table" or #options == 0 then
    options = M.default_options
  end
  local valid = {}
  for _, option in ipairs(options) do
    valid[option.id] = true
  end

  local co, is_main = coroutine.running()
  local outcome
  if not co or is_main then
    -- not in a coroutine (a direct call): the synchronous inputlist()
    local choices = { prompt(params) }
    for i, option in ipairs(options) do
      choices[#choices + 1] = ("%d. %s"):format(i, label(option))
    end
    local choice = options[vim.fn.inputlist(choices)]
    outcome = type(choice) == "table" and choice.id or "reject"
  else
    local id = params.toolCallId or tostring(co)
    asked = asked + 1
    local question = {
      params = params,
      done = false,
      order = asked,
      request_id = require("agentls.client").server_request_id("agent/requestPermission"),
    }
    question.resolve = function(answer)
      if question.done then
        return
      end
      question.done = true
      if M.pending[id] == question then
        M.pending[id] = nil
      end
      -- resume on the next tick: a synchronous answer comes before the yield
      vim.schedule(function()
        coroutine.resume(co, answer)
      end)
    end
    M.pending[id] = question
    if transcript and params.sessionId == state.current and M.kind(params) ~= "tool" then
      -- the row's lines of a sandbox or budget question come from the question: again, now
      -- that it is registered
      transcript:set_tool_asking(params.toolCallId, true)
      panel.render()
      pcall(vim.cmd.redraw)
    end
    if M.in_panel() then
      if params.sessionId == state.current and not panel.is_open() then
        panel.open(false)
      end
      local hint = require("agentls.render").permission_hint(config.options.panel, params)
      vim.notify(util.one_line(M.panel_notice(params, hint)), vim.log.levels.WARN)
    else
      vim.ui.select(options, {
        prompt = prompt(params),
        kind = "agentls.permission",
        format_item = label,
      }, function(choice)
        question.resolve(type(choice) == "table" and choice.id or "reject")
      end)
    end
    outcome = coroutine.yield()
  end
  if not valid[outcome] then
    outcome = "reject"
  end
  if transcript then
    transcript:set_tool_asking(params.toolCallId, false)
    state.changed(params.sessionId)
  end
  return { outcome = outcome }
end

return M
