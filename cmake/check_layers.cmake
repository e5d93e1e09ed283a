# The include rules that keep fitbench layered, checked on every build (a wrong-way include fails
# the build with the file, the line and the rule it breaks). Run as
#   cmake -DSOURCE_DIR=<repo> -DSTAMP=<file> -P check_layers.cmake
# Every folder has a layer; a file may include headers of its own folder and of folders in lower
# layers, never higher or sideways (same layer, other folder) unless listed in ALLOWED_SIDEWAYS.
# core/ includes no Qt header; nothing includes app/. Within core/distribution/ the subfolders are
# layers of their own. docs/architecture.md draws the layers.

cmake_minimum_required(VERSION 3.25)

set(LAYERS
  "core/base=0" "core/python=1" "core=2"
  "core/nn=3" "core/data=3" "core/losses=3" "core/optimizers=3"
  "core/metrics=4"
  "core/training=5"
  "core/distribution/threads=6" "core/distribution/spec=6" "core/distribution/processes=6"
  "core/distribution/collectives=7" "core/distribution/layout=7"
  "core/distribution/trace=8"
  "core/distribution/executors=9"
  "core/distribution/api=10"
  "core/io=11"
  "core/run=12"
  "ui/common=13"
  "ui/charts=14" "ui/images=14" "ui/panels=14" "ui/rehearsal=14"
  "ui/window=15"
  "app=16")
# Same-layer includes that are part of the design ("from>to"); none today.
set(ALLOWED_SIDEWAYS "")

function(layer_of folder out)
  foreach(entry ${LAYERS})
    string(REPLACE "=" ";" pair "${entry}")
    list(GET pair 0 name)
    list(GET pair 1 value)
    if(folder STREQUAL name)
      set(${out} ${value} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
     "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp" "${SOURCE_DIR}/core/*.inc"
     "${SOURCE_DIR}/ui/*.h" "${SOURCE_DIR}/ui/*.cpp" "${SOURCE_DIR}/app/*.h"
     "${SOURCE_DIR}/app/*.cpp")
set(problems "")
foreach(file ${sources})
  get_filename_component(folder "${file}" DIRECTORY)
  layer_of("${folder}" layer)
  if(layer STREQUAL "")
    string(APPEND problems "${file}: its folder ${folder} has no layer in cmake/check_layers.cmake\n")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line ${lines})
    if(folder MATCHES "^core" AND line MATCHES "#[ \t]*include[ \t]*<(Q[A-Za-z]*)")
      string(APPEND problems "${file}: includes <${CMAKE_MATCH_1}>: core/ uses no Qt\n")
    elseif(line MATCHES "#[ \t]*include[ \t]*\"((core|ui|app)/[^\"]+)\"")
      set(target "${CMAKE_MATCH_1}")
      get_filename_component(target_folder "${target}" DIRECTORY)
      if(target_folder STREQUAL folder)
        continue()
      endif()
      layer_of("${target_folder}" target_layer)
      if(target_layer STREQUAL "")
        string(APPEND problems "${file}: includes ${target}, in a folder with no layer\n")
      elseif(target_layer GREATER layer)
        string(APPEND problems "${file}: includes ${target}: ${folder} (layer ${layer}) may not "
                               "include ${target_folder} (layer ${target_layer})\n")
      elseif(target_layer EQUAL layer AND NOT "${folder}>${target_folder}" IN_LIST ALLOWED_SIDEWAYS)
        string(APPEND problems "${file}: includes ${target}: ${folder} and ${target_folder} are "
                               "side by side (layer ${layer}); move the shared part down\n")
      endif()
    endif()
  endforeach()
endforeach()
if(problems)
  # One line per problem, unwrapped, then the error that stops the build.
  message(NOTICE "${problems}")
  message(FATAL_ERROR "fitbench's include layers are broken (the lines above)")
endif()
file(WRITE "${STAMP}" "ok\n")
