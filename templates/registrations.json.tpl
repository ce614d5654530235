%! output = "{lib}_registrations.json"
% -- PyTorch's RegistrationDeclarations idea: per op, the keys it has kernels for, and whether
% -- a new backend must implement it (it dispatches, and no composite kernel covers it).
% local composite = { CompositeImplicitAutograd = true, CompositeExplicitAutograd = true,
%                     CompositeExplicitAutogradNonFunctional = true, CompositeImplicitAutogradNestedTensor = true }
% local q = jstr
{
  "generated_by": $(q(banner)),
  "ops": [
% for i, op in ipairs(model.ops) do
%   local keys, seen = {}, {}
%   if op.dispatch then
%     for _, line in ipairs(op.dispatch) do
%       for _, k in ipairs(line.keys) do if not seen[k] then seen[k] = true; keys[#keys + 1] = k end end
%     end
%   elseif not op.structured_delegate then
%     keys[1] = "CompositeImplicitAutograd"
%   end
%   local has_composite, has_backend = false, false
%   for _, k in ipairs(keys) do
%     if composite[k] then has_composite = true else has_backend = true end
%   end
%   if op.structured_delegate then has_backend = true end
%   local qk = {}
%   for j, k in ipairs(keys) do qk[j] = q(k) end
    {"schema": $(q(op.schema)), "kernels": [$(table.concat(qk, ", "))], "dispatch": $(tostring(has_backend)), "default": $(tostring(has_composite)), "backend_must_implement": $(tostring(has_backend and not has_composite))}$(i < #model.ops and "," or "")
% end
  ]
}
