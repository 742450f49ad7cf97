# lockstep: install rules and the exported CMake package (find_package(lockstep)).
#
# Included once, after every library target exists (properties/CMakeLists.txt includes it once
# lockstep_properties is defined). Installs the static libraries lockstep_zk, lockstep_sim,
# lockstep_recipes, lockstep_properties_core and lockstep_properties, the headers a user's
# recipe and tests need (include/lockstep/{zk,sim,recipes,properties}/*.h), and
# lib/cmake/lockstep/{lockstepConfig,lockstepConfigVersion,lockstepTargets}.cmake.
# Imported names: lockstep::zk, lockstep::sim, lockstep::recipes, lockstep::properties_core,
# lockstep::properties; cli/CMakeLists.txt adds lockstep::traces, lockstep::explore and
# lockstep::cli (the commands over the simulator, for a user's own binary) to the same export.
# A user's project:
#   find_package(lockstep REQUIRED)
#   target_link_libraries(my_test PRIVATE lockstep::properties)
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_lockstep_export_targets lockstep_zk lockstep_sim lockstep_recipes lockstep_properties_core
    lockstep_properties lockstep_warnings)
foreach(_t IN LISTS _lockstep_export_targets)
  if(NOT TARGET ${_t})
    message(FATAL_ERROR "cmake/lockstep_install.cmake: target ${_t} does not exist yet")
  endif()
endforeach()
set_target_properties(lockstep_zk PROPERTIES EXPORT_NAME zk)
set_target_properties(lockstep_sim PROPERTIES EXPORT_NAME sim)
set_target_properties(lockstep_recipes PROPERTIES EXPORT_NAME recipes)
set_target_properties(lockstep_properties_core PROPERTIES EXPORT_NAME properties_core)
set_target_properties(lockstep_properties PROPERTIES EXPORT_NAME properties)
# Linked PRIVATE for the build's own -Werror; exported only because static libraries list their
# private link dependencies. It carries no usage requirements into a user's project.
set_target_properties(lockstep_warnings PROPERTIES EXPORT_NAME warnings)

install(TARGETS ${_lockstep_export_targets} EXPORT lockstepTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep)

# Headers: the contract, the simulator's public API, the recipes' interfaces (and LockBase, the
# base a user's recipe may derive from) and the property suite.
install(FILES
  ${PROJECT_SOURCE_DIR}/zk/context.h ${PROJECT_SOURCE_DIR}/zk/error.h
  ${PROJECT_SOURCE_DIR}/zk/random.h ${PROJECT_SOURCE_DIR}/zk/session.h
  ${PROJECT_SOURCE_DIR}/zk/task.h ${PROJECT_SOURCE_DIR}/zk/types.h ${PROJECT_SOURCE_DIR}/zk/names.h
  ${PROJECT_SOURCE_DIR}/zk/ring_queue.h ${PROJECT_SOURCE_DIR}/zk/flat_map.h
  ${PROJECT_SOURCE_DIR}/zk/wait.h ${PROJECT_SOURCE_DIR}/zk/watch.h ${PROJECT_SOURCE_DIR}/zk/dispatcher.h
  ${PROJECT_SOURCE_DIR}/zk/invariant.h ${PROJECT_SOURCE_DIR}/zk/faults.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep/zk)
install(FILES ${PROJECT_SOURCE_DIR}/sim/world.h ${PROJECT_SOURCE_DIR}/sim/words.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep/sim)
install(FILES ${PROJECT_SOURCE_DIR}/recipes/lock.h ${PROJECT_SOURCE_DIR}/recipes/registry.h
  ${PROJECT_SOURCE_DIR}/recipes/lock_base.h ${PROJECT_SOURCE_DIR}/recipes/promises.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep/recipes)
install(FILES
  ${PROJECT_SOURCE_DIR}/properties/history.h ${PROJECT_SOURCE_DIR}/properties/checkers.h
  ${PROJECT_SOURCE_DIR}/properties/workload.h ${PROJECT_SOURCE_DIR}/properties/scenario.h
  ${PROJECT_SOURCE_DIR}/properties/generator.h
  ${PROJECT_SOURCE_DIR}/properties/claims.h ${PROJECT_SOURCE_DIR}/properties/suite.h
  ${PROJECT_SOURCE_DIR}/properties/check.h ${PROJECT_SOURCE_DIR}/properties/rc_gen.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep/properties)

set(LOCKSTEP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)
install(EXPORT lockstepTargets NAMESPACE lockstep:: DESTINATION ${LOCKSTEP_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lockstepConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lockstepConfig.cmake INSTALL_DESTINATION ${LOCKSTEP_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lockstepConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lockstepConfig.cmake
  ${PROJECT_BINARY_DIR}/lockstepConfigVersion.cmake DESTINATION ${LOCKSTEP_CMAKE_DIR})
