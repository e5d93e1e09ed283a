// core/ uses no Qt: the check must refuse this.
#pragma once
#include <QString>
