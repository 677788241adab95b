/* HDF5 for the tests that read files directly.  The test targets do not get
 * HDF5's include directory from CMake; the Debian serial headers are also
 * reachable as <hdf5/serial/hdf5.h>. */
#ifndef HYMO_TEST_HDF5_H
#define HYMO_TEST_HDF5_H
#if defined(__has_include)
#if __has_include(<hdf5.h>)
#include <hdf5.h>
#else
#include <hdf5/serial/hdf5.h>
#endif
#else
#include <hdf5.h>
#endif
#endif
