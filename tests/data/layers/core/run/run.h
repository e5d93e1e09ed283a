// Includes downwards only: allowed.
#pragma once
#include "core/nn/wrong_way.h"
