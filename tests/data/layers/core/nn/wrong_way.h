// A layer-3 header that includes a layer-12 one: the check must refuse it.
#pragma once
#include "core/run/run.h"
