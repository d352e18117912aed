#include "trace/trace-hw_spyre.h"
