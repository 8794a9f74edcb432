-- derivls plugin: starts the derivls language server for buffers named derivatives.yaml or
-- native_functions.yaml (filetype stays yaml), and wires the generated-code command.
--   vim.g.derivls_autostart = false   -- don't call vim.lsp.enable('derivls') (do it yourself)
--   vim.g.derivls_generated_split = 'split' | 'vsplit' (default) | 'tabnew'
if vim.g.loaded_derivls then
  return
end
vim.g.loaded_derivls = true

if vim.fn.has('nvim-0.11') ~= 1 then
  vim.notify('derivls: Neovim 0.11 or newer is needed for vim.lsp.config', vim.log.levels.WARN)
  return
end

local derivls = require('derivls')

-- Code lenses carry `derivls.showGeneratedCode`: run it on the server and open the result here.
vim.lsp.commands[derivls.command] = derivls.command_handler
-- After an edit of the entry, the server pushes the new code of the views that are shown.
vim.lsp.handlers[derivls.changed_notification] = derivls.on_generated_changed

vim.api.nvim_create_user_command('DerivlsShowGeneratedCode', derivls.show_at_cursor, {
  desc = 'derivls: show the C++ torchgen generates for the derivatives.yaml entry under the cursor',
})

if vim.g.derivls_autostart ~= false then
  -- lsp/derivls.lua's root_dir accepts only derivatives.yaml / native_functions.yaml buffers.
  vim.lsp.enable('derivls')
end
