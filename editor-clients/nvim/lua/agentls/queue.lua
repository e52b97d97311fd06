--- The queued messages (steering and follow-ups) of the current session, from the panel: edit
--- one (`agent/editQueueItem`), deliver it earlier or later (`agent/moveQueueItem`), remove it
--- (`agent/clearQueue` with its `itemId`). :AgentQueue picks one with vim.ui.select.
---
--- A target is what the panel's footer line shows: `{item, kind = "steering"|"followUp", index}`
--- (`index` 1-based, in its queue).
local client = require("agentls.client")
local state = require("agentls.state")
local util = require("agentls.util")

local api = vim.api
local levels = vim.log.levels
local M = {}

local KIND = { steering = "steering", followUp = "follow-up" }

local notify = util.notify

--- The queue's answer (`{steering, followUp}`) is the session's queue now.
local function apply(session_id, queue)
  if type(queue) == "table" then
    state.transcript(session_id):set_queue(queue)
    state.changed(session_id)
  end
end

local function failed(err, what)
  if client.error_kind(err) == "unknownQueueItem" then
    return notify(("cannot %s: the message is no longer queued (it was delivered or removed)"):format(what),
      levels.WARN)
  end
  notify(client.error_text(err), levels.ERROR)
end

--- The current session's queued items as targets, steering first.
function M.targets()
  local t = state.current_transcript()
  local targets = {}
  for _, kind in ipairs({ "steering", "followUp" }) do
    for index, item in ipairs(t and t.queue[kind] or {}) do
      targets[#targets + 1] = { item = item, kind = kind, index = index }
    end
  end
  return targets
end

--- `callback(target)` with `target`, else the only queued item, else one picked.
local function with_target(target, what, callback)
  if target then
    return callback(target)
  end
  local targets = M.targets()
  if #targets == 0 then
    return notify(("nothing queued to %s"):format(what), levels.WARN)
  end
  if #targets == 1 then
    return callback(targets[1])
  end
  util.select(targets, {
    prompt = ("agentls: %s which queued message?"):format(what),
    kind = "agentls.queue_item",
    format_item = function(t)
      return ("%s %d: %s"):format(KIND[t.kind], t.index, vim.split(t.item.text or "", "\n", { plain = true })[1])
    end,
  }, callback)
end

--- `callback(session_id, chosen)`: the current session and the target (see with_target).
local function with_queued(target, what, callback)
  local session_id = state.current
  if not session_id then
    return notify("no session: nothing is queued", levels.WARN)
  end
  with_target(target, what, function(chosen)
    callback(session_id, chosen)
  end)
end

--- Send `method` with `params`; the queue it answers is the session's, then `done()`. `what`
--- goes in the error message ("cannot edit it").
local function change(session_id, method, params, what, done)
  client.request(method, params, function(err, queue)
    if err then
      return failed(err, what)
    end
    apply(session_id, queue)
    done()
  end)
end

--- Edit a queued message's text (in the prompt input, starting from its text); it keeps its
--- place and its attachments.
function M.edit(target)
  with_queued(target, "edit", function(session_id, chosen)
    local what = ("edit the queued %s message"):format(KIND[chosen.kind])
    require("agentls.commands").ask_text(what, chosen.item.text or "", function(text)
      local params = { sessionId = session_id, itemId = chosen.item.id, text = text }
      change(session_id, "agent/editQueueItem", params, "edit it", function()
        notify(("queued %s message edited"):format(KIND[chosen.kind]))
      end)
    end)
  end)
end

--- Put the panel's cursor on the line of queued item `id` (after a move).
local function follow(id)
  local panel = require("agentls.panel")
  panel.render()
  for _, win in ipairs(panel.windows()) do
    for row = 0, api.nvim_buf_line_count(panel.buf) - 1 do
      local at = panel.queue_item_at(row)
      if at and at.item.id == id then
        api.nvim_win_set_cursor(win, { row + 1, 0 })
      end
    end
  end
end

--- Move a queued message `delta` places (-1: delivered earlier, 1: later) within its queue.
function M.move(target, delta)
  with_queued(target, "move", function(session_id, chosen)
    local t = state.transcript(session_id)
    local count = #(t.queue[chosen.kind] or {})
    local index = chosen.index - 1 + delta -- 0-based
    if index < 0 or index >= count then
      return notify(("the queued %s message is already %s"):format(KIND[chosen.kind], delta < 0 and "first" or "last"))
    end
    local params = { sessionId = session_id, itemId = chosen.item.id, index = index }
    change(session_id, "agent/moveQueueItem", params, "move it", function()
      follow(chosen.item.id)
    end)
  end)
end

--- Remove a queued message; the notification has its text.
function M.remove(target)
  with_queued(target, "remove", function(session_id, chosen)
    local params = { sessionId = session_id, itemId = chosen.item.id }
    client.request("agent/clearQueue", params, function(err)
      if err then
        return failed(err, "remove it")
      end
      client.request("agent/getQueue", { sessionId = session_id }, function(queue_err, queue)
        if not queue_err then
          apply(session_id, queue)
        end
      end)
      notify(("removed the queued %s message: %s"):format(KIND[chosen.kind], chosen.item.text or ""))
    end)
  end)
end

--- :AgentQueue: pick a queued message, then what to do with it.
function M.pick()
  with_target(nil, "change", function(chosen)
    local actions = {
      { id = "edit", label = "Edit its text" },
      { id = "up", label = "Deliver it earlier" },
      { id = "down", label = "Deliver it later" },
      { id = "remove", label = "Remove it" },
    }
    util.select(actions, {
      prompt = ("agentls: queued %s message %q"):format(KIND[chosen.kind], chosen.item.text or ""),
      kind = "agentls.queue_action",
      format_item = function(action)
        return action.label
      end,
    }, function(action)
      if action.id == "edit" then
        M.edit(chosen)
      elseif action.id == "up" then
        M.move(chosen, -1)
      elseif action.id == "down" then
        M.move(chosen, 1)
      else
        M.remove(chosen)
      end
    end)
  end)
end

return M
