#pragma once
// The one JSON form of a LedgerSnapshot (memory/ledger.h), written and read by this pair alone: run.json's
// memory.measured and memory.measured_host, a rank's memory events and its result on the wire to the
// window (app/session/RunEvent.cpp), docs/run-json.md "memory". Categories are objects keyed by
// category_name, all present; bytes not attributed to a layer (the ledger's layer -1) are "unattributed",
// so `layers` holds model layers only (model.layers[].index). from_json(to_json(s)) == s.
#include <nlohmann/json.hpp>

#include "memory/category.h"
#include "memory/ledger.h"

namespace hr {

void to_json(nlohmann::json& j, const LedgerSnapshot& s);
// A missing field keeps its default; a value of the wrong kind is an InputError naming it.
void from_json(const nlohmann::json& j, LedgerSnapshot& s);

// {category_name: bytes} for every category, and back (unknown names are an InputError).
nlohmann::json category_bytes_to_json(const CategoryBytes& b);
CategoryBytes category_bytes_from_json(const nlohmann::json& j);

}  // namespace hr
