# Helpers shared by every library folder, so that warnings, sanitizers and the
# include layout (<folder>/include/sohusim/<folder>/...) are set in one place.

set(SOHUSIM_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)

function(sohusim_apply_flags target)
  target_compile_options(${target} PRIVATE ${SOHUSIM_WARNINGS})
  if(SOHUSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(SOHUSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# sohusim_add_library(<folder> DEPS <targets...>)
# Builds <folder>/src/**.cpp into sohusim_<folder>, exported as sohusim::<folder>,
# with public headers under <folder>/include (installed as include/sohusim/<folder>).
function(sohusim_add_library folder)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  if(NOT _srcs)
    return()  # a layer with no sources yet defines no target
  endif()
  set(_t sohusim_${folder})
  add_library(${_t} STATIC ${_srcs})
  add_library(sohusim::${folder} ALIAS ${_t})
  set_target_properties(${_t} PROPERTIES EXPORT_NAME ${folder} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${_t} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_include_directories(${_t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)  # the folder's private headers
  target_link_libraries(${_t} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_features(${_t} PUBLIC cxx_std_17)
  sohusim_apply_flags(${_t})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
