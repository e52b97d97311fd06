--- The agent's edits of open buffers: `workspace/applyEdit` with an honest version check,
--- and `agent/saveDocuments`.
---
--- Neovim's built-in `workspace/applyEdit` handler skips a `TextDocumentEdit` whose
--- version is older than the buffer's (it prints "Buffer ... newer than edits") but still
--- answers `applied = true`, and it does not check version 0 at all. The server would
--- then believe an edit landed that did not. So this handler checks every versioned
--- `TextDocumentEdit` first and refuses the whole edit when one is stale; otherwise the
--- built-in handler applies it, so the change is one undo step in the buffer as usual.
local api = vim.api
local M = {}

--- The loaded buffer of `uri`, if any (never creates one).
function M.loaded_buffer(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  fname = vim.fs.normalize(fname)
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(bufnr) then
      local name = api.nvim_buf_get_name(bufnr)
      if name ~= "" and vim.fs.normalize(vim.fn.fnamemodify(name, ":p")) == fname then
        return bufnr
      end
    end
  end
  return nil
end

--- The buffer version the LSP client last reported for `bufnr` (what didOpen/didChange sent).
function M.buffer_version(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

local function short_name(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  return ok and vim.fn.fnamemodify(fname, ":.") or uri
end

--- Why `edit` (a WorkspaceEdit) must not be applied, or nil when it may.
function M.refusal(edit)
  for _, change in ipairs(type(edit) == "table" and edit.documentChanges or {}) do
    local document = change.kind == nil and change.textDocument or nil
    local version = document and document.version
    if type(version) == "number" then
      local bufnr = M.loaded_buffer(document.uri)
      if not bufnr then
        return ("%s is not open in the editor any more"):format(short_name(document.uri))
      end
      local current = M.buffer_version(bufnr)
      if current ~= version then
        return ("%s changed in the editor since the agent read it (buffer version %s, edit for version %d)"):format(
          short_name(document.uri),
          tostring(current),
          version
        )
      end
    end
  end
  return nil
end

--- The loaded buffers an edit (a WorkspaceEdit) changes.
local function edited_buffers(edit)
  local uris = {}
  for _, change in ipairs(type(edit) == "table" and edit.documentChanges or {}) do
    if change.kind == nil and type(change.textDocument) == "table" then
      uris[#uris + 1] = change.textDocument.uri
    end
  end
  for uri in pairs(type(edit) == "table" and type(edit.changes) == "table" and edit.changes or {}) do
    uris[#uris + 1] = uri
  end
  local buffers = {}
  for _, uri in ipairs(uris) do
    buffers[#buffers + 1] = M.loaded_buffer(uri)
  end
  return buffers
end

--- Close the open undo block of each buffer the edit changes, so that the edit is one undo step
--- of its own: Neovim closes a buffer's block only when keys are typed in it, and an edit made
--- while the user is elsewhere (a rewind's right after the agent's) would join the previous one.
local function break_undo(edit)
  for _, bufnr in ipairs(edited_buffers(edit)) do
    pcall(api.nvim_buf_call, bufnr, function()
      vim.cmd("let &g:undolevels = &g:undolevels")
    end)
  end
end

--- Wrap the built-in `workspace/applyEdit` handler with the version check.
function M.apply_edit_handler(builtin)
  return function(err, params, ctx, handler_config)
    local reason = params and M.refusal(params.edit)
    if reason then
      return { applied = false, failureReason = reason }
    end
    break_undo(params and params.edit)
    -- without the label, which the built-in handler would print on every edit: the panel shows it
    local quiet = vim.tbl_extend("force", {}, params)
    quiet.label = nil
    return builtin(err, quiet, ctx, handler_config)
  end
end

--- Save the buffers of `uris` as the user's `:write` would; the URIs that were saved.
---@param uris string[]
---@return string[]
function M.save(uris)
  local saved = {}
  for _, uri in ipairs(uris or {}) do
    local bufnr = M.loaded_buffer(uri)
    if bufnr then
      -- `write!`: no question if the file changed on disk since it was read. The server
      -- asks because the disk must hold the buffer's text, and would write it itself otherwise.
      local ok, err = pcall(api.nvim_buf_call, bufnr, function()
        vim.cmd("silent write!")
      end)
      if ok and not vim.bo[bufnr].modified then
        saved[#saved + 1] = uri
      elseif not ok then
        require("agentls.util").notify(("could not save %s: %s"):format(short_name(uri), err), vim.log.levels.WARN)
      end
    end
  end
  return saved
end

return M
