// Side by side with ui/rehearsal (same layer): refused.
#pragma once
#include "ui/rehearsal/view.h"
