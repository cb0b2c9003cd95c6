-- What each dialect's keywords are: which ones hold subschemas (so that $id, id and anchors
-- are looked for only where schemas are, never inside `enum`, `const` or an unknown keyword),
-- which ones validate, and which $schema URIs name a dialect. Draft 2020-12's keywords come in
-- vocabularies, so a metaschema's $vocabulary can turn some off (JSON Schema's own test suite
-- has one without the validation vocabulary).
local M = {}

local function set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

-- Where subschemas are: one schema, an array of them, or an object of them.
local DRAFT4_PLACES = {
  single = set { "additionalItems", "additionalProperties", "not" },
  array = set { "allOf", "anyOf", "oneOf" },
  map = set { "properties", "patternProperties", "definitions" },
  one_or_many = set { "items" },          -- a schema, or an array of them
  mixed_map = set { "dependencies" },     -- an object of schemas and arrays of names
}
local PLACES_2020 = {
  single = set { "additionalProperties", "items", "contains", "propertyNames", "not", "if", "then",
    "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema" },
  array = set { "allOf", "anyOf", "oneOf", "prefixItems" },
  map = set { "properties", "patternProperties", "$defs", "dependentSchemas" },
  one_or_many = {},
  mixed_map = set { "dependencies" },
}

local DRAFT4_KEYWORDS = set {
  "$ref", "type", "enum", "multipleOf", "maximum", "minimum", "maxLength", "minLength", "pattern",
  "format", "items", "additionalItems", "maxItems", "minItems", "uniqueItems", "properties",
  "patternProperties", "additionalProperties", "required", "dependencies", "maxProperties",
  "minProperties", "allOf", "anyOf", "oneOf", "not",
}
local OPENAPI_KEYWORDS = set { "nullable", "discriminator", "readOnly", "writeOnly" }
for k in pairs(DRAFT4_KEYWORDS) do OPENAPI_KEYWORDS[k] = true end

local VOCAB = "https://json-schema.org/draft/2020-12/vocab/"
M.VOCABULARIES = {
  [VOCAB .. "core"] = set { "$ref", "$dynamicRef" },
  [VOCAB .. "applicator"] = set { "prefixItems", "items", "contains", "additionalProperties",
    "properties", "patternProperties", "dependentSchemas", "propertyNames", "if", "allOf", "anyOf",
    "oneOf", "not", "dependencies" },
  [VOCAB .. "unevaluated"] = set { "unevaluatedItems", "unevaluatedProperties" },
  [VOCAB .. "validation"] = set { "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired" },
  [VOCAB .. "format-annotation"] = set { "format" },
  [VOCAB .. "format-assertion"] = set { "format" },
  [VOCAB .. "content"] = {},
  [VOCAB .. "meta-data"] = set { "readOnly", "writeOnly" },
}

--- The keywords of draft 2020-12 with the vocabularies `vocab` (a $vocabulary object; nil: all).
function M.keywords_2020(vocab)
  local out = {}
  for uri, words in pairs(M.VOCABULARIES) do
    if vocab == nil or vocab[uri] ~= nil then
      for k in pairs(words) do out[k] = true end
    end
  end
  return out
end

M.DIALECTS = {
  ["2020-12"] = { name = "2020-12", places = PLACES_2020, id = "$id", anchors = true, ref_siblings = true,
    keywords = M.keywords_2020(nil), boolean_schemas = true },
  draft4 = { name = "draft4", places = DRAFT4_PLACES, id = "id", ref_siblings = false, keywords = DRAFT4_KEYWORDS,
    draft4 = true },
  -- OpenAPI 3.1's Schema Object: draft 2020-12 with OpenAPI's discriminator (its readOnly and
  -- writeOnly are 2020-12's meta-data vocabulary already)
  ["openapi-3.1"] = { name = "openapi-3.1", places = PLACES_2020, id = "$id", anchors = true, ref_siblings = true,
    keywords = (function() local k = M.keywords_2020(nil); k.discriminator = true; return k end)(), boolean_schemas = true },
  -- OpenAPI 3.0's Schema Object: draft 4 without `id`, with its own four keywords
  ["openapi-3.0"] = { name = "openapi-3.0", places = DRAFT4_PLACES, ref_siblings = false, keywords = OPENAPI_KEYWORDS,
    draft4 = true, openapi = true, formats = true },
}

-- $schema values that name a dialect (with and without the empty fragment, http or https).
M.BY_SCHEMA_URI = {
  ["http://json-schema.org/draft-04/schema"] = "draft4",
  ["https://json-schema.org/draft-04/schema"] = "draft4",
  ["https://json-schema.org/draft/2020-12/schema"] = "2020-12",
  ["http://json-schema.org/draft/2020-12/schema"] = "2020-12",
}

--- The dialect name a $schema value names, or nil.
function M.by_schema_uri(s)
  return M.BY_SCHEMA_URI[(s:gsub("#$", ""))]
end

return M
